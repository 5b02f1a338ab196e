// SYNONYM edges (HippoRAG's synonymy edges): each given concept to the concepts of its namespace
// whose embeddings have cosine >= $threshold, at most $cap of the nearest. MERGE without a
// direction keeps one relationship per pair whichever end was linked first; the mark lets a
// resumed ingest link exactly the concepts an interrupted one did not reach.
UNWIND $uids AS uid
MATCH (c:Concept {uid: uid})
SET c.synonyms_linked = true
WITH c
CALL (c) {
  CALL db.index.vector.queryNodes('terag_concept_embedding', $candidates, c.embedding)
  YIELD node, score
  WITH node, 2 * score - 1 AS similarity
  WHERE node.namespace = c.namespace AND node <> c AND similarity >= $threshold
  WITH node, similarity ORDER BY similarity DESC LIMIT $cap
  MERGE (c)-[r:SYNONYM]-(node)
  ON CREATE SET r.similarity = similarity
  RETURN count(r) AS n
}
RETURN sum(n) AS links
