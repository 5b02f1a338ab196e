// A new job, 'receiving' (seen by no one) until its documents are written (job_queue.cypher),
// for the workers of `$queue` (TERAG_JOB_QUEUE). Counted and created in one transaction under
// the key's own lock (the SET takes its node's write lock until commit): concurrent submissions
// of one key each count the others' jobs, so neither `$max_unfinished` unfinished jobs nor
// `$per_minute` submissions in the last minute is ever exceeded. Past either nothing is
// created, and the row says why.
MERGE (k:IngestJobKey {key: $key})
SET k.lock = randomUUID()
WITH k
OPTIONAL MATCH (j:IngestJob {key: $key})
WITH count(CASE WHEN j.state IN ['receiving', 'queued', 'running'] THEN 1 END) AS unfinished,
     count(CASE WHEN j.submitted >= datetime() - duration({seconds: 60}) THEN 1 END) AS recent
WITH unfinished, recent, unfinished < $max_unfinished AND recent < $per_minute AS ok
FOREACH (_ IN CASE WHEN ok THEN [1] ELSE [] END |
  CREATE (:IngestJob {id: $id, namespace: $namespace, key: $key, queue: $queue,
                      state: 'receiving', documents_total: $documents_total, documents_done: 0,
                      estimate_total: $estimate_total, estimate_done: 0,
                      passages_done: 0, passages_new: 0, passages_unchanged: 0,
                      passages_replaced: 0, input_tokens: 0, output_tokens: 0, errors: [],
                      cancel_requested: false, preempted: 0, attempts: 0, documents_left: true,
                      created: datetime(), submitted: datetime()})
)
RETURN unfinished, recent, ok AS created
