// Personalised PageRank: the restart vector is $sources = [{uid, weight}], sent to GDS as
// sourceNodes [[node, weight], ...]. Only passages are returned, best first.
UNWIND $sources AS s
MATCH (c:Concept {uid: s.uid})
WITH collect([c, s.weight]) AS sourceNodes
CALL gds.pageRank.stream($graph, {
  sourceNodes: sourceNodes, dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance
})
YIELD nodeId, score
WITH nodeId, score ORDER BY score DESC LIMIT $candidates
WITH gds.util.asNode(nodeId) AS p, score
WHERE p:Passage
RETURN p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text, score
LIMIT $top_k
