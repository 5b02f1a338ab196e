// Claims take this one lock first, so two workers never claim the same job, nor two jobs of
// one namespace (what they read next is what the previous claim committed).
MERGE (q:IngestJobQueue {name: 'ingest'})
SET q.lock = randomUUID()
