// A running group's heartbeat: renews the lease while `$owner` still holds it, and says whether
// the job was asked to stop and whether another namespace's job has been waiting for a worker
// longer than `$wait_ms` (an idle worker would have taken it by then): the group then yields.
// `$group` (or null) is where the group is: passages done of its total, its estimate, and the
// document in hand; the job's view adds it to the groups recorded, until this one is.
MATCH (j:IngestJob {id: $id})
WITH j, j.lease_owner = $owner AND j.state = 'running' AS mine
FOREACH (_ IN CASE WHEN mine THEN [1] ELSE [] END |
  SET j.lease_until = datetime() + duration({milliseconds: $lease_ms}))
FOREACH (_ IN CASE WHEN mine AND $group IS NOT NULL THEN [1] ELSE [] END |
  SET j.group_done = $group.done, j.group_total = $group.total,
      j.group_estimate = $group.estimate, j.document = $group.document)
RETURN mine, j.cancel_requested AS cancel,
  EXISTS {
    MATCH (o:IngestJob)
    WHERE o.namespace <> j.namespace AND o.state IN ['queued', 'running'] AND o.queue = j.queue
      AND NOT o.cancel_requested
      AND (o.lease_until IS NULL OR o.lease_until < datetime())
      AND o.waiting_since < datetime() - duration({milliseconds: $wait_ms})
      AND NOT EXISTS {
        MATCH (h:IngestJob {namespace: o.namespace})
        WHERE h.state = 'running' AND h.lease_until >= datetime()
      }
  } AS others
