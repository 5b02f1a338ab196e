// Dense retrieval (the fallback and the `dense` mode): the namespace's nearest passages, from
// its own vector index, equal scores in uid order.
CALL db.index.vector.queryNodes($vector_index, $top_k + $spare, $vector)
YIELD node AS p, score
WITH p, score ORDER BY score DESC, p.uid LIMIT $top_k
RETURN p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text, score,
       p {.source, .heading_path, .page_start, .page_end, .char_start, .char_end} AS provenance
