// Everything that defines a namespace's graph, in a canonical order (for idempotency checks).
CALL () {
  MATCH (p:Passage {namespace: $namespace})
  RETURN collect(p.id + '#' + p.hash) AS passages
}
CALL () {
  MATCH (c:Concept {namespace: $namespace})
  RETURN collect(c.key + '#' + toString(c.frequency)) AS concepts
}
CALL () {
  MATCH (c:Concept {namespace: $namespace})-[:HAS_PASSAGE]->(p)
  RETURN collect(c.key + '>' + p.id) AS links
}
CALL () {
  MATCH (a:Concept {namespace: $namespace})-[r:CO_OCCURRENCE]->(b)
  RETURN collect(a.key + '~' + b.key + '#' + toString(r.count)) AS cooc
}
RETURN passages, concepts, links, cooc
