// Every statement, and every row of the batched deletes, goes on only while this drop still owns
// the namespace: its Namespace node carries `$token` (mark_dropping.cypher), or, for leftovers
// with no node (`$marked` false), no node of that name exists. A drop that stalled (a worker
// whose lease ran out) and wakes after another drop and a new import of the same name then
// deletes nothing of the new namespace: the later drop put its own token on the old node, and
// the new node has none.
//
// Its unfinished ingest jobs fail first (their documents go with the job sweep), but for
// `$keep_job`: an import job dropping its own leftover or what it wrote goes on.
MATCH (j:IngestJob {namespace: $namespace})
WHERE j.state IN ['receiving', 'queued', 'running'] AND j.id <> coalesce($keep_job, '')
  AND CASE WHEN $marked
        THEN EXISTS { MATCH (n:Namespace {name: $namespace}) WHERE n.drop_token = $token }
        ELSE NOT EXISTS { MATCH (:Namespace {name: $namespace}) } END
SET j.state = 'failed', j.finished = datetime(), j.lease_owner = null, j.lease_until = null,
    j.errors = j.errors + ['NamespaceDropped: the namespace was dropped; submit the documents again'];
// Deletes a namespace in batches so a large one never needs one huge transaction: first the
// relationships (they all start at a Concept), then the nodes. The namespace is marked
// `dropping` before (mark_dropping.cypher), under its write lock, so no ingest writes meanwhile.
MATCH (:Concept {namespace: $namespace})-[r]->()
CALL (r) {
  WITH r WHERE CASE WHEN $marked
    THEN EXISTS { MATCH (n:Namespace {name: $namespace}) WHERE n.drop_token = $token }
    ELSE NOT EXISTS { MATCH (:Namespace {name: $namespace}) } END
  DELETE r
} IN TRANSACTIONS OF 10000 ROWS;
MATCH (x) WHERE (x:Passage OR x:Concept OR x:IngestRun OR x:IngestLease OR x:ProjectionUse) AND x.namespace = $namespace
CALL (x) {
  WITH x WHERE CASE WHEN $marked
    THEN EXISTS { MATCH (n:Namespace {name: $namespace}) WHERE n.drop_token = $token }
    ELSE NOT EXISTS { MATCH (:Namespace {name: $namespace}) } END
  DETACH DELETE x
} IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Namespace {name: $namespace})
WHERE n.drop_token = $token
DETACH DELETE n
