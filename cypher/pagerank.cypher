// Personalised PageRank. The restart vector is the matched concepts ($sources = [{uid, weight}],
// weights summing to 1) plus the seeded passages ($passages = [[node id, weight], ...], together
// the passage seed weight; empty when off), sent to GDS as weighted sourceNodes. Only passages
// are returned, best first: every node's score streams out of GDS (a filter on the label inside
// the call would change the graph the walk runs on), and Cypher keeps the best $candidates.
CALL () {
  UNWIND $sources AS s
  MATCH (c:Concept {uid: s.uid})
  RETURN collect([id(c), s.weight]) AS concepts
}
CALL gds.pageRank.stream($graph, {
  sourceNodes: concepts + $passages, dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: $concurrency, logProgress: false
})
YIELD nodeId, score
WITH nodeId, score ORDER BY score DESC LIMIT $candidates
WITH gds.util.asNode(nodeId) AS p, score
WHERE p:Passage
RETURN p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text, score
LIMIT $top_k
