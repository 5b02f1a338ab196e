// The full-text half of `flat.cypher`, run on its own while the question is still being embedded
// (the words need no vector): Lucene BM25 over the namespace's folded title and text ($lucene,
// or null for a question without content words), cut at $top with ties by uid.
CALL () {
  WITH $lucene AS lucene WHERE lucene IS NOT NULL
  CALL db.index.fulltext.queryNodes($text_index, lucene, {limit: $top + $spare})
  YIELD node, score
  WITH node, score ORDER BY score DESC, node.uid LIMIT $top
  RETURN collect([id(node), score]) AS text
}
RETURN text
