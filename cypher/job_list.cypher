// The `$limit` newest jobs after the `$offset` newest, of the namespaces a key may read
// (`$namespaces` null: all), oldest first (ties broken by id, so pages neither skip nor repeat).
MATCH (j:IngestJob)
WHERE j.state IN ['queued', 'running', 'succeeded', 'failed', 'cancelled'] AND j.expired IS NULL
  AND ($namespaces IS NULL OR j.namespace IN $namespaces)
WITH j ORDER BY j.created DESC, j.id DESC SKIP $offset LIMIT $limit
RETURN j {.*} AS job
ORDER BY job.created, job.id
