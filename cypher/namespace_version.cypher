MATCH (n:Namespace {name: $namespace})
RETURN n.version AS version, n.passages AS passages, n.concepts AS concepts,
       n.extractor AS extractor, n.model AS model, n.extractor_version AS extractor_version,
       n.epoch AS epoch, coalesce(n.cooccurrence, 'kept') = 'kept' AS pairs,
       EXISTS { MATCH (l:IngestLease {namespace: $namespace}) WHERE l.until > datetime() } AS ingesting,
       n.embedding_model AS embedding_model, n.embedding_dimensions AS embedding_dimensions,
       n.embedding_query_prefix AS embedding_query_prefix,
       n.embedding_passage_prefix AS embedding_passage_prefix,
       n.search AS search, coalesce(n.dropping, false) AS dropping
