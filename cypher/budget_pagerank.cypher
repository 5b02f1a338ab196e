// Budget selection "pagerank" and "knn_pagerank": global PageRank over $graph (the passage-concept
// graph, or the passages' nearest-neighbour graph, weighted by $weight when not null).
CALL gds.pageRank.stream($graph, {
  dampingFactor: 0.85, maxIterations: 50, tolerance: 1e-7,
  relationshipWeightProperty: $weight
})
YIELD nodeId, score
WITH gds.util.asNode(nodeId) AS p, score
WHERE p:Passage
RETURN p.id AS id, score
