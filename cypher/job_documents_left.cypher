// Finished jobs whose documents are still stored (deleted after the job ends).
MATCH (j:IngestJob)
WHERE j.documents_left AND (j.state IN ['succeeded', 'failed', 'cancelled'] OR j.expired IS NOT NULL)
RETURN j.id AS id LIMIT 100
