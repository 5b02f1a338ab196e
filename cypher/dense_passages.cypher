// Dense retrieval (the fallback and the `dense` mode): the namespace's nearest passages.
CYPHER 25
MATCH (p:Passage)
  SEARCH p IN (
    VECTOR INDEX terag_passage_vector
    FOR $vector
    WHERE p.namespace = $namespace
    LIMIT $top_k
  ) SCORE AS score
RETURN p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text, score
ORDER BY score DESC
