// A namespace's CO_OCCURRENCE (count) or SYNONYM (similarity) edges for its archive, by
// concept key, in the direction they are stored: a source concept's targets and values,
// collected by a streaming subquery (see export_has_passage.cypher) and sent $chunk at a time,
// so a hub concept's thousands of pairs never make one record. $type is one of the two.
MATCH (a:Concept {namespace: $namespace})
WITH a, COLLECT {
  MATCH (a)-[r]->(b:Concept)
  WHERE type(r) = $type
  RETURN [b.key, r.count, r.similarity]
} AS out
UNWIND range(0, size(out) - 1, $chunk) AS i
RETURN a.key AS a, out[i..i + $chunk] AS out
