// The worker that holds the job ends it ('failed' or 'cancelled') with its errors. The batches
// an ingest wrote of the group in hand stay in its namespace, so they count as done: `$written`
// as the worker last saw it, or else as its heartbeat last recorded it (an import drops what it
// wrote when it stops, so its count stays).
MATCH (j:IngestJob {id: $id})
WHERE j.lease_owner = $owner AND j.state = 'running'
SET j.passages_done = j.passages_done +
      CASE WHEN j.kind = 'import' THEN 0 ELSE coalesce($written, j.group_done, 0) END
SET j.state = $state, j.finished = datetime(), j.errors = (j.errors + $errors)[..$max_errors],
    j.lease_owner = null, j.lease_until = null,
    j.group_done = null, j.group_total = null, j.group_estimate = null, j.document = null
