MATCH (p:Passage {namespace: $namespace})
WITH p, vector.similarity.cosine(p.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $top_k
RETURN p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text, 2 * score - 1 AS score,
       p {.source, .heading_path, .page_start, .page_end, .char_start, .char_end} AS provenance
