// One batch of a job's documents, in submission order (`seq`).
UNWIND $documents AS d
CREATE (x:IngestJobDocument)
SET x = d, x.job_id = $job_id
