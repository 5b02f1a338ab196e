// The next passages whose concept pairs are not counted yet, with their concepts (a CO_OCCURRENCE
// build goes through a namespace this way, one transaction per batch).
MATCH (p:Passage {namespace: $namespace})
WHERE p.paired IS NULL
WITH p LIMIT $limit
RETURN p.uid AS passage,
       [(c:Concept)-[r:HAS_PASSAGE]->(p) WHERE r.mention IS NULL | c.uid] AS concepts
