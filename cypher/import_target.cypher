// What an import needs to know of its target namespace, if it exists: the embedding identity it
// records, whether an import left it unfinished (`importing`), whether a lease is held on it
// (an ingest or an import running now) and how many passages it holds.
MATCH (n:Namespace {name: $namespace})
RETURN n.importing AS importing, n.embedding_model AS embedding_model,
       n.embedding_dimensions AS embedding_dimensions,
       n.embedding_query_prefix AS embedding_query_prefix,
       n.embedding_passage_prefix AS embedding_passage_prefix,
       EXISTS { MATCH (l:IngestLease {namespace: $namespace}) WHERE l.until > datetime() } AS leased,
       COUNT { (p:Passage {namespace: $namespace}) } AS passages
