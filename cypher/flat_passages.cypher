// The `flat` mode: the question's best passages by words (Lucene BM25 over the folded title and
// text, $lucene null for a question without content words) and by meaning (the vector index),
// each ranking cut at $top with ties by uid, returned whole for reciprocal rank fusion.
CALL () {
  WITH $lucene AS lucene WHERE lucene IS NOT NULL
  CALL db.index.fulltext.queryNodes($text_index, lucene, {limit: $top + $spare})
  YIELD node, score
  WITH node AS p, score ORDER BY score DESC, p.uid LIMIT $top
  RETURN collect({id: p.id, doc_id: p.doc_id, title: p.title, text: p.text, score: score,
                  provenance: p {.source, .heading_path, .page_start, .page_end, .char_start, .char_end}}) AS text
}
CALL () {
  CALL db.index.vector.queryNodes($vector_index, $top + $spare, $vector)
  YIELD node, score
  WITH node AS p, score ORDER BY score DESC, p.uid LIMIT $top
  RETURN collect({id: p.id, doc_id: p.doc_id, title: p.title, text: p.text, score: score,
                  provenance: p {.source, .heading_path, .page_start, .page_end, .char_start, .char_end}}) AS vector
}
RETURN text, vector
