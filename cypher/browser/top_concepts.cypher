// TERAG Browser kit: the most frequent concepts of a namespace (frequency = number of passages
// the concept occurs in), with their type and whether they are named entities.
// Paste these first (edit the values):
//   :param namespace => 'sample'
//   :param limit => 25
MATCH (c:Concept {namespace: $namespace})
RETURN c.name AS concept, c.type AS type, c:Entity AS entity, c.frequency AS passages,
       COUNT { (c)-[:CO_OCCURRENCE]-() } AS co_occurring_concepts
ORDER BY passages DESC, co_occurring_concepts DESC, concept
LIMIT $limit
