// A job whose documents are all written joins the queue.
MATCH (j:IngestJob {id: $id, state: 'receiving'})
SET j.state = 'queued', j.created = datetime(), j.waiting_since = datetime()
