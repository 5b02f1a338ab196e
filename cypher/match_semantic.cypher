// Top concepts of the types the walk includes, by cosine similarity through the vector index.
// The index spans all namespaces, so it is asked for more candidates than needed and filtered.
CALL db.index.vector.queryNodes('terag_concept_embedding', $candidates, $vector)
YIELD node, score
WHERE node.namespace = $namespace AND NOT node.type IN $skip_types
RETURN id(node) AS node, node.uid AS uid, node.key AS key, node.name AS name, node.type AS type,
       node.frequency AS frequency, 2 * score - 1 AS similarity
ORDER BY similarity DESC
LIMIT $top_n
