// The question's best passages of the namespace, by words and by meaning, in one round trip:
// Lucene BM25 over title and text with English stemming ($lucene is `+nskey:<namespace key>
// +(<words>)`, or null for none), and the vector index searched inside the namespace.
CYPHER 25
CALL () {
  WITH $lucene AS lucene WHERE lucene IS NOT NULL
  CALL db.index.fulltext.queryNodes('terag_passage_text', lucene, {limit: $top})
  YIELD node, score
  RETURN collect([id(node), score]) AS text
}
CALL () {
  MATCH (p:Passage)
    SEARCH p IN (
      VECTOR INDEX terag_passage_vector
      FOR $vector
      WHERE p.namespace = $namespace
      LIMIT $top
    ) SCORE AS score
  RETURN collect([id(p), score]) AS vector
}
RETURN text, vector
