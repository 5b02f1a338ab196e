// Why a passage was retrieved: its node id (the GDS id the restart vector and the walk use) and
// which of the question's linked concepts ($nodes: their node ids) point at it over HAS_PASSAGE.
// No row: no such passage in the namespace.
MATCH (p:Passage {namespace: $namespace, id: $passage})
OPTIONAL MATCH (c:Concept {namespace: $namespace})-[:HAS_PASSAGE]->(p)
WHERE id(c) IN $nodes
RETURN id(p) AS node, collect(id(c)) AS linked
