// Exact cosine over one namespace's concepts: used when the shared index returns too few of them.
MATCH (c:Concept {namespace: $namespace})
WHERE NOT c.type IN $skip_types
WITH c, vector.similarity.cosine(c.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $top_n
RETURN id(c) AS node, c.uid AS uid, c.key AS key, c.name AS name, c.type AS type,
       c.frequency AS frequency, 2 * score - 1 AS similarity
