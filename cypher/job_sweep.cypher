// Housekeeping, every statement on its own: finished jobs past the retention become tombstones
// (id and namespace kept, so their 404 says they expired), old tombstones go, and so do jobs
// whose submission never finished. Documents go with job_delete_documents.cypher.
MATCH (j:IngestJob)
WHERE j.state IN ['succeeded', 'failed', 'cancelled'] AND j.expired IS NULL
  AND j.finished < datetime() - duration({seconds: $retention_s})
SET j.expired = datetime()
REMOVE j.errors, j.key, j.lease_owner;
MATCH (j:IngestJob)
WHERE j.expired < datetime() - duration({seconds: $tombstone_s})
DELETE j;
MATCH (j:IngestJob {state: 'receiving'})
WHERE j.created < datetime() - duration({seconds: $receiving_s})
SET j.state = 'failed', j.finished = datetime(), j.expired = datetime()
