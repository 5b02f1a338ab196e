// Concepts of a namespace that have no embedding yet (written when first needed: see
// terag_neo4j/retrieval/concept_vectors.py), a batch at a time.
MATCH (c:Concept {namespace: $namespace})
WHERE c.embedding IS NULL
RETURN c.uid AS uid, c.name AS name
LIMIT $limit
