// Its unfinished ingest jobs fail first (their documents go with the job sweep), but for
// `$keep_job`: an import job dropping its own leftover or what it wrote goes on.
MATCH (j:IngestJob {namespace: $namespace})
WHERE j.state IN ['receiving', 'queued', 'running'] AND j.id <> coalesce($keep_job, '')
SET j.state = 'failed', j.finished = datetime(), j.lease_owner = null, j.lease_until = null,
    j.errors = j.errors + ['NamespaceDropped: the namespace was dropped; submit the documents again'];
// Deletes a namespace in batches so a large one never needs one huge transaction: first the
// relationships (they all start at a Concept), then the nodes. The namespace is marked
// `dropping` before (mark_dropping.cypher), under its write lock, so no ingest writes meanwhile.
MATCH (:Concept {namespace: $namespace})-[r]->()
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;
MATCH (x) WHERE (x:Passage OR x:Concept OR x:IngestRun OR x:IngestLease OR x:ProjectionUse) AND x.namespace = $namespace
CALL (x) { DETACH DELETE x } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Namespace {name: $namespace})
DETACH DELETE n
