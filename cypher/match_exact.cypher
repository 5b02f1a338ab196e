// Exact matches: query entities whose normalised name equals a concept's (any type).
UNWIND $norms AS norm
MATCH (c:Concept {namespace: $namespace, norm: norm})
RETURN norm, c.uid AS uid, c.key AS key, c.name AS name, c.type AS type, c.frequency AS frequency
