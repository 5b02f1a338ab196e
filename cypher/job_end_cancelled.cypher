// Jobs asked to stop that no live worker holds (never started, between groups, or their worker
// died) end 'cancelled' here: nothing will run them again. A dead worker's group counts the
// batches its heartbeat last recorded as written (an ingest's stay; an import's are its
// leftover, dropped by the next import into the namespace).
MATCH (j:IngestJob)
WHERE j.state IN ['queued', 'running'] AND j.cancel_requested
  AND (j.lease_until IS NULL OR j.lease_until < datetime())
SET j.passages_done = coalesce(j.passages_done, 0) +
      CASE WHEN j.kind = 'import' THEN 0 ELSE coalesce(j.group_done, 0) END
SET j.state = 'cancelled', j.finished = datetime(), j.lease_owner = null, j.lease_until = null,
    j.group_done = null, j.group_total = null, j.group_estimate = null, j.document = null
