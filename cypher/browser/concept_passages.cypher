// TERAG Browser kit: the passages a concept occurs in (graph view: Concept -HAS_PASSAGE-> Passage),
// together with the other concepts of those passages, so shared concepts show as bridges.
// $concept is matched against the concept's name or its normalised name.
// Paste these first (edit the values):
//   :param namespace => 'sample'
//   :param concept => 'Volkswagen'
//   :param limit => 50
MATCH (c:Concept {namespace: $namespace})
WHERE c.norm = toLower(trim($concept)) OR toLower(c.name) = toLower(trim($concept))
MATCH path = (c)-[:HAS_PASSAGE]->(p:Passage)
OPTIONAL MATCH other = (o:Concept)-[:HAS_PASSAGE]->(p)
WHERE o <> c
RETURN path, other
LIMIT $limit
