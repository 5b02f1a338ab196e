MATCH (j:IngestJob {id: $job_id})
SET j.documents_left = false
