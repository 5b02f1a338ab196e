// One batch of a job's documents deleted (repeated until none is left).
MATCH (d:IngestJobDocument {job_id: $job_id})
WITH d LIMIT $batch
DELETE d
RETURN count(*) AS deleted
