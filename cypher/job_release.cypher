// The worker gives a job back unfinished: it yielded to another tenant (`$preempted`), or
// Neo4j failed for now (`$failed`, retried after `$delay_ms`). Its cursor stays.
MATCH (j:IngestJob {id: $id})
WHERE j.lease_owner = $owner AND j.state = 'running'
SET j.lease_owner = null, j.lease_until = null, j.waiting_since = datetime(),
    j.preempted = j.preempted + $preempted, j.attempts = j.attempts + $failed,
    j.not_before = datetime() + duration({milliseconds: $delay_ms}),
    j.group_done = null, j.group_total = null, j.group_estimate = null, j.document = null
