// Sizes of a job's next documents from its cursor, to cut the next group.
MATCH (d:IngestJobDocument {job_id: $job_id})
WHERE d.seq >= $from
RETURN d.seq AS seq, d.estimate AS estimate
ORDER BY seq LIMIT $limit
