// Jobs asked to stop that no live worker holds (never started, between groups, or their worker
// died) end 'cancelled' here: nothing will run them again.
MATCH (j:IngestJob)
WHERE j.state IN ['queued', 'running'] AND j.cancel_requested
  AND (j.lease_until IS NULL OR j.lease_until < datetime())
SET j.state = 'cancelled', j.finished = datetime(), j.lease_owner = null, j.lease_until = null
