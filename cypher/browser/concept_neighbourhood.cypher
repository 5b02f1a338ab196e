// TERAG Browser kit: a concept and the concepts it co-occurs with (graph view). The edge property
// `count` is the number of passages the pair shares; the paper preset's walk follows these edges.
// A namespace has them once built (TERAG_COOCCURRENCE=lazy, the default, builds them at the
// paper preset's first query, or `terag index PATHS -n NAMESPACE --cooccurrence eager`).
// $concept is matched against the concept's name or its normalised name (lower case, no accents
// or punctuation), e.g. 'Ferdinand Porsche' or 'ferdinand porsche'.
// Paste these first (edit the values):
//   :param namespace => 'sample'
//   :param concept => 'Stuttgart'
//   :param limit => 25
MATCH (c:Concept {namespace: $namespace})
WHERE c.norm = toLower(trim($concept)) OR toLower(c.name) = toLower(trim($concept))
MATCH path = (c)-[r:CO_OCCURRENCE]-(n:Concept)
RETURN path
ORDER BY r.count DESC, n.frequency DESC
LIMIT $limit
