// The namespace's graph with every relationship readable both ways (passages pass mass back).
// Concept types in $skip_types, relationship types not in $rel_types and concepts named by more
// than $hub_cap passages (0 = no cap) stay out of it.
// Every passage is projected, also one no included concept reaches (it can still be seeded).
CALL () {
  MATCH (c:Concept {namespace: $namespace})
  WHERE NOT c.type IN $skip_types AND ($hub_cap = 0 OR c.frequency <= $hub_cap)
  OPTIONAL MATCH (c)-[r]->(t)
  WHERE type(r) IN $rel_types AND (t:Passage OR (NOT t.type IN $skip_types AND ($hub_cap = 0 OR t.frequency <= $hub_cap)))
  RETURN c AS source, type(r) AS rel, t AS target
  UNION ALL
  MATCH (p:Passage {namespace: $namespace})
  RETURN p AS source, null AS rel, null AS target
}
WITH gds.graph.project($graph, source, target,
       {sourceNodeLabels: labels(source), targetNodeLabels: labels(target), relationshipType: rel},
       {undirectedRelationshipTypes: ['*']})
     AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
