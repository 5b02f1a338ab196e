// A new job, 'receiving' (seen by no one) until its documents are written (job_queue.cypher),
// for the workers of `$queue` (TERAG_JOB_QUEUE).
CREATE (j:IngestJob {id: $id, namespace: $namespace, key: $key, queue: $queue, state: 'receiving',
                     documents_total: $documents_total, documents_done: 0,
                     estimate_total: $estimate_total, estimate_done: 0,
                     passages_done: 0, passages_new: 0, passages_unchanged: 0,
                     passages_replaced: 0, input_tokens: 0, output_tokens: 0, errors: [],
                     cancel_requested: false, preempted: 0, attempts: 0, documents_left: true,
                     created: datetime()})
