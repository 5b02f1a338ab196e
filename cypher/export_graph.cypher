// A namespace's graph as edge lists (for the in-process reference PageRank and for export).
CALL () {
  MATCH (c:Concept {namespace: $namespace})-[:HAS_PASSAGE]->(p:Passage)
  RETURN collect([c.uid, p.uid]) AS has_passage
}
CALL () {
  MATCH (a:Concept {namespace: $namespace})-[:CO_OCCURRENCE]->(b:Concept)
  RETURN collect([a.uid, b.uid]) AS cooccurrence
}
CALL () {
  MATCH (c:Concept {namespace: $namespace}) RETURN collect(c.uid) AS concepts
}
RETURN has_passage, cooccurrence, concepts
