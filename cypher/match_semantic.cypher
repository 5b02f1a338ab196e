// Top concepts of the types the walk includes, by cosine similarity, searched inside the
// namespace by the concept vector index (its SEARCH filter), equal scores in uid order.
CYPHER 25
MATCH (c:Concept)
  SEARCH c IN (
    VECTOR INDEX terag_concept_vector
    FOR $vector
    WHERE c.namespace = $namespace
    LIMIT $candidates
  ) SCORE AS score
WITH c, score WHERE NOT c.type IN $skip_types
RETURN id(c) AS node, c.uid AS uid, c.key AS key, c.name AS name, c.type AS type,
       c.frequency AS frequency, 2 * score - 1 AS similarity
ORDER BY similarity DESC, uid
LIMIT $top_n
