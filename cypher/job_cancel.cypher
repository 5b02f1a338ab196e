// Asks a job to stop. One no worker holds ends 'cancelled' at once (the lock this write takes
// orders it with a claim: a claimed job is only asked, and its worker ends it 'cancelled').
MATCH (j:IngestJob {id: $id})
WHERE j.state IN ['queued', 'running']
SET j.cancel_requested = true
WITH j
WHERE j.lease_until IS NULL OR j.lease_until < datetime()
SET j.state = 'cancelled', j.finished = datetime(), j.lease_owner = null, j.lease_until = null
