// A namespace's HAS_PASSAGE links for its archive, by concept key and passage id.
MATCH (c:Concept {namespace: $namespace})-[r:HAS_PASSAGE]->(p:Passage)
RETURN c.key AS concept, p.id AS passage, coalesce(r.mention, false) AS mention
