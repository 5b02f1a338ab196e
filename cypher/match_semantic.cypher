// Top concepts of the types the walk includes, by cosine similarity, searched inside the
// namespace by the concept vector index (its SEARCH filter), equal scores in uid order.
CYPHER 25
MATCH (node:Concept)
  SEARCH node IN (
    VECTOR INDEX terag_concept_vector
    FOR $vector
    WHERE node.namespace = $namespace
    LIMIT $candidates
  ) SCORE AS score
WITH node, score WHERE NOT node.type IN $skip_types
RETURN id(node) AS node, node.uid AS uid, node.key AS key, node.name AS name, node.type AS type,
       node.frequency AS frequency, 2 * score - 1 AS similarity
ORDER BY similarity DESC, uid
LIMIT $top_n
