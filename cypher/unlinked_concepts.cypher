// Concepts of a namespace that have not been given their SYNONYM edges yet.
MATCH (c:Concept {namespace: $namespace})
WHERE c.synonyms_linked IS NULL
RETURN c.uid AS uid
