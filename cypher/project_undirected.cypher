// The same graph with every relationship readable both ways (passages pass mass back).
MATCH (c:Concept {namespace: $namespace})
OPTIONAL MATCH (c)-[r:HAS_PASSAGE|CO_OCCURRENCE]->(t)
WITH gds.graph.project($graph, c, t,
       {sourceNodeLabels: labels(c), targetNodeLabels: labels(t), relationshipType: type(r)},
       {undirectedRelationshipTypes: ['*']})
     AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
