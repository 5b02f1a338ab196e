// The namespace's undirected passage-concept graph with every leaf concept (one passage names
// it) folded into its passage: what the walk of `project_undirected` computes for passages,
// on far fewer nodes: most concepts are named by one passage (docs/retrieval.md).
// Why it is exact: a leaf l of passage p (relationship weight 1) holds d*s(p)/W(p) and gives
// it all back to p one step later, so at the fixed point p receives d^2*s(p)*L/W(p) from its
// L leaves. A self-loop on p of weight (1+d)*L, with p's other relationships kept, makes the
// fixed point s'(p) = s(p) * (W + d*L) / W for every passage and leaves what p sends to each
// other node unchanged; `fold` = W / (W + d*L) turns s' back into s (`pagerank_folded`).
// An undirected self-loop is stored once per direction, so its row carries half the weight.
// A leaf's restart weight w becomes d*w on its passage (what it would pass on); concepts named
// by no passage can reach no passage. Concept types in $skip_types and concepts named by more
// than $hub_cap passages (0 = no cap) stay out, as in `project_undirected`.
CALL () {
  MATCH (p:Passage {namespace: $namespace})
  OPTIONAL MATCH (c:Concept)-[:HAS_PASSAGE]->(p)
  WHERE NOT c.type IN $skip_types AND ($hub_cap = 0 OR c.frequency <= $hub_cap)
  WITH p, count(c) AS named, count(CASE WHEN c.frequency = 1 THEN 1 END) AS leaves
  RETURN p AS source, CASE WHEN leaves > 0 THEN p END AS target,
         (1.0 + $damping) * leaves / 2.0 AS weight,
         CASE WHEN named = 0 THEN 1.0 ELSE toFloat(named) / (named + $damping * leaves) END AS fold
  UNION ALL
  MATCH (c:Concept {namespace: $namespace})
  WHERE NOT c.type IN $skip_types AND c.frequency > 1 AND ($hub_cap = 0 OR c.frequency <= $hub_cap)
  MATCH (c)-[:HAS_PASSAGE]->(p:Passage)
  RETURN c AS source, p AS target, 1.0 AS weight, 0.0 AS fold
}
WITH gds.graph.project($graph, source, target,
       {sourceNodeLabels: labels(source), targetNodeLabels: labels(target), relationshipType: 'HAS_PASSAGE',
        sourceNodeProperties: {fold: fold}, targetNodeProperties: null,
        relationshipProperties: {weight: weight}},
       {undirectedRelationshipTypes: ['*']})
     AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
