// SYNONYM edges (HippoRAG's synonymy edges): each given concept to the concepts of its namespace
// (searched inside the namespace by the concept index's filter)
// whose embeddings have cosine >= $threshold, at most $cap of the nearest. MERGE without a
// direction keeps one relationship per pair whichever end was linked first; the mark lets a
// resumed ingest link exactly the concepts an interrupted one did not reach.
CYPHER 25
UNWIND $uids AS uid
MATCH (c:Concept {uid: uid})
SET c.synonyms_linked = true
WITH c
CALL (c) {
  MATCH (node:Concept)
    SEARCH node IN (
      VECTOR INDEX terag_concept_vector
      FOR c.embedding
      WHERE node.namespace = c.namespace
      LIMIT $candidates
    ) SCORE AS score
  WITH node, 2 * score - 1 AS similarity
  WHERE node <> c AND similarity >= $threshold
  WITH node, similarity ORDER BY similarity DESC, node.uid LIMIT $cap
  MERGE (c)-[r:SYNONYM]-(node)
  ON CREATE SET r.similarity = similarity
  RETURN count(r) AS n
}
RETURN sum(n) AS links
