// GDS's own compute time of the personalised PageRank `pagerank` runs, for the same restart
// vector ($sources = [[node id, weight]]): what `terag bench-latency` times.
CALL gds.pageRank.stats($graph, {sourceNodes: $sources, dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: $concurrency, logProgress: false})
YIELD computeMillis, ranIterations
RETURN computeMillis, ranIterations
