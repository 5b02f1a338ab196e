// A namespace's CO_OCCURRENCE (count) or SYNONYM (similarity) edges for its archive, by
// concept key, in the direction they are stored. $type is one of the two.
MATCH (a:Concept {namespace: $namespace})-[r]->(b:Concept)
WHERE type(r) = $type
RETURN a.key AS a, b.key AS b, r.count AS count, r.similarity AS similarity
