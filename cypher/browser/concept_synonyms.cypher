// TERAG Browser kit: a concept and its SYNONYM edges (graph view): the concepts whose embeddings
// have cosine >= TERAG_SYNONYM_THRESHOLD, linked at index time (edge property `similarity`).
// The PageRank walk follows them when TERAG_WALK_SYNONYMS=true.
// Paste these first (edit the values):
//   :param namespace => 'sample'
//   :param concept => 'Volkswagen Beetle'
//   :param limit => 25
MATCH (c:Concept {namespace: $namespace})
WHERE c.norm = toLower(trim($concept)) OR toLower(c.name) = toLower(trim($concept))
MATCH path = (c)-[r:SYNONYM]-(n:Concept)
RETURN path
ORDER BY r.similarity DESC
LIMIT $limit
