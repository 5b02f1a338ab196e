// The worker that holds the job ends it ('failed' or 'cancelled') with its errors.
MATCH (j:IngestJob {id: $id})
WHERE j.lease_owner = $owner AND j.state = 'running'
SET j.state = $state, j.finished = datetime(), j.errors = (j.errors + $errors)[..$max_errors],
    j.lease_owner = null, j.lease_until = null,
    j.group_done = null, j.group_total = null, j.group_estimate = null, j.document = null
