// The question's best passages of the namespace, by words and by meaning, in one round trip,
// each from the namespace's own index (namespace_indexes.cypher): Lucene BM25 over the folded
// title and text with English stemming ($lucene is the question's words, or null for none),
// and the vector index. Each ranking is cut at $top with ties broken by the passage's uid, not
// by Lucene's document order (which segment merges change): a few more than $top are read so
// equal scores at the cut are ordered the same way every time. `vector_first` is the id of the
// vector ranking's first passage: the final ranking may pin it (retrieval/final_rank.py).
CALL () {
  WITH $lucene AS lucene WHERE lucene IS NOT NULL
  CALL db.index.fulltext.queryNodes($text_index, lucene, {limit: $top + $spare})
  YIELD node, score
  WITH node, score ORDER BY score DESC, node.uid LIMIT $top
  RETURN collect([id(node), score]) AS text
}
CALL () {
  CALL db.index.vector.queryNodes($vector_index, $top + $spare, $vector)
  YIELD node, score
  WITH node, score ORDER BY score DESC, node.uid LIMIT $top
  RETURN collect([id(node), score]) AS vector, head(collect(node.id)) AS vector_first
}
RETURN text, vector, vector_first
