// Personalised PageRank. The restart vector holds the matched concepts ($sources = [{uid,
// weight}], weights summing to 1) and, when $passage_weight > 0, the namespace's passages
// (HippoRAG 2's passage nodes): each weighted by its min-max-scaled cosine to the question raised
// to $passage_power, the $passage_top most similar (0 = all), together $passage_weight. GDS gets
// it as weighted sourceNodes [[node, weight], ...]. Only passages are returned, best first.
CALL () {
  UNWIND $sources AS s
  MATCH (c:Concept {uid: s.uid})
  RETURN collect([c, s.weight]) AS concepts
}
CALL () {
  MATCH (p:Passage {namespace: $namespace})
  WHERE $passage_weight > 0
  WITH p, vector.similarity.cosine(p.embedding, $vector) AS sim
  ORDER BY sim DESC
  WITH collect([p, sim]) AS ranked, min(sim) AS lo, max(sim) AS hi
  UNWIND (CASE WHEN $passage_top > 0 THEN ranked[..$passage_top] ELSE ranked END) AS x
  WITH x[0] AS p, CASE WHEN hi > lo THEN ((x[1] - lo) / (hi - lo)) ^ $passage_power ELSE 1.0 END AS w
  WITH collect([p, w]) AS seeded, sum(w) AS total
  RETURN [x IN seeded WHERE x[1] > 0 | [x[0], $passage_weight * x[1] / total]] AS passages
}
WITH concepts + passages AS sourceNodes
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
