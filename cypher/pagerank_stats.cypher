// GDS's own compute time of the personalised PageRank `pagerank` or `pagerank_folded` runs, for
// the same restart vector ($sources and $leaves, as `pagerank_folded` takes them; no leaves on
// an unfolded graph): what `terag bench-latency` times. $weight names a folded projection's
// relationship weight, null on others.
CALL () {
  UNWIND $leaves AS leaf
  MATCH (c:Concept)-[:HAS_PASSAGE]->(p:Passage)
  WHERE id(c) = leaf[0] AND c.frequency = 1 AND p.namespace = $namespace
    AND coalesce(p.since, 0) <= $version
  RETURN id(p) AS node, $damping * leaf[1] AS weight
  UNION ALL
  UNWIND $sources AS s
  RETURN s[0] AS node, s[1] AS weight
}
WITH node, sum(weight) AS weight
WITH collect([node, weight]) AS sources
WHERE size(sources) > 0  // none left: no walk (GDS would walk from every node)
CALL gds.pageRank.stats($graph, {sourceNodes: sources, relationshipWeightProperty: $weight, dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: $concurrency, logProgress: false})
YIELD computeMillis, ranIterations
RETURN computeMillis, ranIterations
