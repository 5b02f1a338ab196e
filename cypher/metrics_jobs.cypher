// Ingest jobs kept in the database, by state (for /metrics; every process of the service
// reports the same figures).
MATCH (j:IngestJob)
WHERE j.expired IS NULL
RETURN j.state AS state, count(*) AS jobs
