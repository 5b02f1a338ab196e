// A namespace's CO_OCCURRENCE (count) or SYNONYM (similarity) edges for its archive, by
// concept key, in the direction they are stored: one record per source concept, its targets
// and values collected by a streaming subquery (see export_has_passage.cypher). $type is one
// of the two.
MATCH (a:Concept {namespace: $namespace})
WITH a, COLLECT {
  MATCH (a)-[r]->(b:Concept)
  WHERE type(r) = $type
  RETURN [b.key, r.count, r.similarity]
} AS out
WHERE size(out) > 0
RETURN a.key AS a, out
