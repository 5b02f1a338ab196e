// A page of a namespace's CO_OCCURRENCE (count) or SYNONYM (similarity) edges for its archive,
// by source concept in uid order after $after, in the direction they are stored: a source
// concept's targets and values, collected by a streaming subquery and sent $chunk at a time, so
// a hub concept's thousands of pairs never make one record; a concept without any sends one
// empty record (its uid still moves the page on). $type is one of the two. Targets by key, not
// in storage order: the same namespace exports the same bytes.
MATCH (a:Concept)
WHERE a.uid > $after AND a.uid < $end AND a.namespace = $namespace
WITH a ORDER BY a.uid LIMIT $page
WITH a, COLLECT {
  MATCH (a)-[r]->(b:Concept)
  WHERE type(r) = $type
  WITH b, r ORDER BY b.key
  RETURN [b.key, r.count, r.similarity]
} AS out
UNWIND CASE size(out) WHEN 0 THEN [0] ELSE range(0, size(out) - 1, $chunk) END AS i
RETURN a.uid AS uid, a.key AS a, out[i..i + $chunk] AS out
