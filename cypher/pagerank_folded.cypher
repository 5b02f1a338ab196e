// `pagerank` on a folded projection (`project_folded`). Each linked concept in $leaves
// ([[node id, weight]]: those one passage names, which the projection does not hold) restarts
// from that passage at damping times its weight, where the projection holds the passage; the
// walk's score times the passage's `fold` is its score on the unfolded graph (concepts have
// fold 0). The best $candidates nodes by the walk's own score are rescored; `floor`, the
// lowest walk score among them, bounds the true score of every node outside them (fold <= 1),
// so `walk.pagerank` widens the window when a returned passage scores no higher than it.
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
CALL gds.pageRank.stream($graph, {
  sourceNodes: sources, relationshipWeightProperty: 'weight', dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: $concurrency, logProgress: false
})
YIELD nodeId, score
WITH nodeId, score ORDER BY score DESC, nodeId LIMIT $candidates
WITH collect([nodeId, score]) AS window
WITH window, window[-1][1] AS floor, size(window) < $candidates AS whole
UNWIND window AS w
WITH floor, whole, w[0] AS nodeId, w[1] * gds.util.nodeProperty($graph, w[0], 'fold') AS score
WHERE score > 0
WITH floor, whole, nodeId, score ORDER BY score DESC, nodeId LIMIT $top_k
WITH floor, whole, gds.util.asNode(nodeId) AS p, score
WHERE p:Passage AND p.namespace = $namespace AND coalesce(p.since, 0) <= $version
RETURN id(p) AS node, p.uid AS uid, p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text,
       score, p {.source, .heading_path, .page_start, .page_end, .char_start, .char_end} AS provenance,
       floor, whole
ORDER BY score DESC, p.uid
LIMIT $top_k
