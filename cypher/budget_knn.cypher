// Budget selection "knn_pagerank" (KET-RAG's core chunks): project the namespace's passages with
// their vectors, then link each to its $top_k most similar passages (cosine; seeded and single-
// threaded, so the same graph gives the same links).
CALL () {
  MATCH (p:Passage {namespace: $namespace})
  RETURN gds.graph.project($graph, p, null, {sourceNodeProperties: p {.embedding}, targetNodeProperties: null}) AS g
}
CALL gds.knn.mutate($graph, {
  nodeProperties: {embedding: 'COSINE'}, topK: $top_k, randomSeed: 42, concurrency: 1,
  mutateRelationshipType: 'SIMILAR', mutateProperty: 'similarity'
})
YIELD relationshipsWritten
RETURN g.nodeCount AS nodes, relationshipsWritten AS relationships
