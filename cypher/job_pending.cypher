// Whether a claim could find work (a job no live worker holds): idle workers ask this read
// every second and take the queue's lock (job_lock_queue.cypher) only when it says yes.
MATCH (j:IngestJob)
WHERE j.state IN ['queued', 'running'] AND j.queue = $queue
  AND (j.lease_until IS NULL OR j.lease_until < datetime())
RETURN count(j) > 0 AS pending
