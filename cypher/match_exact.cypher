// Exact matches: names (normalised) that equal a concept's, of any type the walk includes.
UNWIND $norms AS norm
MATCH (c:Concept {namespace: $namespace, norm: norm})
WHERE NOT c.type IN $skip_types
RETURN norm, id(c) AS node, c.uid AS uid, c.key AS key, c.name AS name, c.type AS type, c.frequency AS frequency
