// Ingest jobs of `terag serve` (service/job_store.py): their own labels, never Passage or
// Concept, so no namespace query sees them. Idempotent: safe to run on every start.
CREATE CONSTRAINT terag_ingest_job_id IF NOT EXISTS FOR (j:IngestJob) REQUIRE j.id IS UNIQUE;
CREATE INDEX terag_ingest_job_state IF NOT EXISTS FOR (j:IngestJob) ON (j.state);
CREATE INDEX terag_ingest_job_queue IF NOT EXISTS FOR (j:IngestJob) ON (j.queue, j.state);
CREATE INDEX terag_ingest_job_namespace IF NOT EXISTS FOR (j:IngestJob) ON (j.namespace);
CREATE INDEX terag_ingest_job_document IF NOT EXISTS FOR (d:IngestJobDocument) ON (d.job_id, d.seq);
CREATE CONSTRAINT terag_ingest_job_queue_name IF NOT EXISTS FOR (q:IngestJobQueue) REQUIRE q.name IS UNIQUE;
MERGE (:IngestJobQueue {name: 'ingest'});
// One node per key, whose lock a submission takes to count and create in one step
CREATE CONSTRAINT terag_ingest_job_key IF NOT EXISTS FOR (k:IngestJobKey) REQUIRE k.key IS UNIQUE;
CREATE INDEX terag_ingest_job_by_key IF NOT EXISTS FOR (j:IngestJob) ON (j.key)
