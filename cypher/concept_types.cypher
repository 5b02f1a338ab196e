// The entity and noun-phrase concepts of the namespace with these normalised names (titles
// aside), most frequent first: budget mode maps an LLM name onto the concept the graph has.
UNWIND $norms AS norm
MATCH (c:Concept {namespace: $namespace, norm: norm})
WHERE c.type <> 'title'
RETURN norm, c.type AS type, c.name AS name, c.frequency AS frequency
ORDER BY norm, frequency DESC, type
