// Personalised PageRank from a restart vector of GDS node ids ($sources = [[node id, weight]]:
// the linked concepts and the seeded passages), on the namespace's projection or a question's
// local one. Only passages are returned, best first: every node's score streams out of GDS (a
// filter on the label inside the call would change the graph the walk runs on), and Cypher
// keeps the best $candidates. A node deleted since the projection was built is skipped.
CALL gds.pageRank.stream($graph, {
  sourceNodes: $sources, dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: $concurrency, logProgress: false
})
YIELD nodeId, score
WITH nodeId, score ORDER BY score DESC LIMIT $candidates
WITH gds.util.asNode(nodeId) AS p, score
WHERE p:Passage
RETURN id(p) AS node, p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text, score
LIMIT $top_k
