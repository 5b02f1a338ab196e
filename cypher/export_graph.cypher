// A namespace's graph as edge lists (for the in-process reference PageRank and for export).
CALL () {
  MATCH (c:Concept {namespace: $namespace})-[:HAS_PASSAGE]->(p:Passage)
  RETURN collect([c.uid, p.uid]) AS has_passage
}
CALL () {
  MATCH (a:Concept {namespace: $namespace})-[r:CO_OCCURRENCE|SYNONYM]->(b:Concept)
  RETURN collect([a.uid, b.uid, type(r)]) AS links
}
CALL () {
  MATCH (c:Concept {namespace: $namespace}) RETURN collect([c.uid, c.type]) AS concepts
}
CALL () {
  MATCH (p:Passage {namespace: $namespace}) RETURN collect(p.uid) AS passages
}
RETURN has_passage, links, concepts, passages
