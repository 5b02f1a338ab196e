// The question's nearest passages of the namespace by embedding (approximate, in the index).
CYPHER 25
MATCH (p:Passage)
  SEARCH p IN (
    VECTOR INDEX terag_passage_vector
    FOR $vector
    WHERE p.namespace = $namespace
    LIMIT $top
  ) SCORE AS score
RETURN id(p) AS node, score
