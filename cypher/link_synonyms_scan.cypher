// SYNONYM edges as link_synonyms.cypher makes them, by an exact scan of the namespace's concepts:
// for a namespace whose embedding model makes vectors of another size than the shared concept
// index holds (that index leaves them out).
UNWIND $uids AS uid
MATCH (c:Concept {uid: uid})
SET c.synonyms_linked = true
WITH c
CALL (c) {
  MATCH (node:Concept {namespace: c.namespace})
  WHERE node <> c AND node.embedding IS NOT NULL
  WITH node, vector.similarity.cosine(c.embedding, node.embedding) AS score
  WITH node, 2 * score - 1 AS similarity
  WHERE similarity >= $threshold
  WITH node, similarity ORDER BY similarity DESC, node.uid LIMIT $cap
  MERGE (c)-[r:SYNONYM]-(node)
  ON CREATE SET r.similarity = similarity
  RETURN count(r) AS n
}
RETURN sum(n) AS links
