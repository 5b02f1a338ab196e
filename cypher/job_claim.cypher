// The next job to run one group of, with a lease for `$owner` (after job_lock_queue, in the
// same transaction). Within a namespace jobs run in submission order, one at a time (a later
// job may replace a document an earlier one adds); across namespaces the one served longest
// ago goes first, so a big job yields to another tenant's after each group. A job whose lease
// ran out (its worker died) is claimed again and resumes at its last written group.
MATCH (j:IngestJob)
WHERE j.state IN ['queued', 'running'] AND j.queue = $queue
WITH j ORDER BY j.created, j.id
WITH j.namespace AS namespace, collect(j)[0] AS head
WHERE NOT head.cancel_requested
  AND (head.lease_until IS NULL OR head.lease_until < datetime())
  AND (head.not_before IS NULL OR head.not_before <= datetime())
OPTIONAL MATCH (o:IngestJob {namespace: namespace})
WITH head, max(o.served) AS served
ORDER BY coalesce(served, datetime('1970-01-01T00:00:00Z')), head.created
LIMIT 1
SET head.state = 'running', head.started = coalesce(head.started, datetime()),
    head.lease_owner = $owner, head.lease_until = datetime() + duration({milliseconds: $lease_ms}),
    head.served = datetime(), head.slices = coalesce(head.slices, 0) + 1,
    head.group_done = null, head.group_total = null, head.group_estimate = null,
    head.document = null
RETURN head {.*} AS job
