// GDS's own compute time of the personalised PageRank `pagerank` runs, for the same restart
// vector ($sources = [{uid, weight}], concept or passage uids): what `terag bench-latency` times.
CALL () {
  UNWIND $sources AS s
  OPTIONAL MATCH (c:Concept {uid: s.uid})
  OPTIONAL MATCH (p:Passage {uid: s.uid})
  RETURN collect([coalesce(c, p), s.weight]) AS sourceNodes
}
CALL gds.pageRank.stats($graph, {sourceNodes: sourceNodes, dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: $concurrency, logProgress: false})
YIELD computeMillis, ranIterations
RETURN computeMillis, ranIterations
