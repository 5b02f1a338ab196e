// In-memory GDS graph of one namespace, oriented as in TERAG: HAS_PASSAGE concept -> passage,
// CO_OCCURRENCE both ways (the undirected match below yields each stored pair from both ends).
MATCH (c:Concept {namespace: $namespace})
OPTIONAL MATCH (c)-[r:HAS_PASSAGE|CO_OCCURRENCE]-(t)
WHERE type(r) = 'CO_OCCURRENCE' OR startNode(r) = c
WITH gds.graph.project($graph, c, t,
       {sourceNodeLabels: labels(c), targetNodeLabels: labels(t), relationshipType: type(r)})
     AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
