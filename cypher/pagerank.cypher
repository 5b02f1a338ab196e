// Personalised PageRank from a restart vector of GDS node ids ($sources = [[node id, weight]]:
// the linked concepts and the seeded passages), on the namespace's projection or a question's
// local one. Only passages are returned, best first, equal scores in uid order: every node's
// score streams out of GDS (a filter on the label inside the call would change the graph the
// walk runs on), and Cypher keeps the best $candidates (ties by node id, fixed for a node).
// A node id maps back to the passage the projection held only if that passage is of this
// namespace and was written at or before the projection's version ($version): an id Neo4j
// reused for a passage written since (of any namespace) is not taken for the one it knew.
CALL gds.pageRank.stream($graph, {
  sourceNodes: $sources, dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: $concurrency, logProgress: false
})
YIELD nodeId, score
WITH nodeId, score ORDER BY score DESC, nodeId LIMIT $candidates
WITH gds.util.asNode(nodeId) AS p, score
WHERE p:Passage AND p.namespace = $namespace AND coalesce(p.since, 0) <= $version
RETURN id(p) AS node, p.uid AS uid, p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text,
       score, p {.source, .heading_path, .page_start, .page_end, .char_start, .char_end} AS provenance
ORDER BY score DESC, p.uid
LIMIT $top_k
