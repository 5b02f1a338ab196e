// The newest jobs of the namespaces a key may read (`$namespaces` null: all), oldest first.
MATCH (j:IngestJob)
WHERE j.state IN ['queued', 'running', 'succeeded', 'failed', 'cancelled'] AND j.expired IS NULL
  AND ($namespaces IS NULL OR j.namespace IN $namespaces)
WITH j ORDER BY j.created DESC LIMIT $limit
RETURN j {.*} AS job
ORDER BY job.created, job.id
