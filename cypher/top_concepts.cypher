// A namespace's most connected concepts (the console's overview): by the passages each occurs in
// (its frequency, kept on the node, so no relationship is counted before the limit), then by the
// concepts it co-occurs with.
MATCH (c:Concept {namespace: $namespace})
WITH c ORDER BY c.frequency DESC, c.name LIMIT $limit
RETURN c.name AS name, c.type AS type, c:Entity AS entity, coalesce(c.frequency, 0) AS passages,
       COUNT { (c)-[:CO_OCCURRENCE]-() } AS co_occurring
ORDER BY passages DESC, co_occurring DESC, name
