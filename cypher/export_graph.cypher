// A namespace's graph as edge lists of GDS node ids (for the in-process reference PageRank).
CALL () {
  MATCH (c:Concept {namespace: $namespace})-[:HAS_PASSAGE]->(p:Passage)
  RETURN collect([id(c), id(p)]) AS has_passage
}
CALL () {
  MATCH (a:Concept {namespace: $namespace})-[r:CO_OCCURRENCE|SYNONYM]->(b:Concept)
  RETURN collect([id(a), id(b), type(r)]) AS links
}
CALL () {
  MATCH (c:Concept {namespace: $namespace}) RETURN collect([id(c), c.type, c.frequency]) AS concepts
}
CALL () {
  MATCH (p:Passage {namespace: $namespace}) RETURN collect([id(p), p.uid]) AS passages
}
RETURN has_passage, links, concepts, passages
