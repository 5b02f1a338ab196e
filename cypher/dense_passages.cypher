CALL db.index.vector.queryNodes('terag_passage_embedding', $candidates, $vector)
YIELD node, score
WHERE node.namespace = $namespace
RETURN node.id AS id, node.doc_id AS doc_id, node.title AS title, node.text AS text,
       2 * score - 1 AS score
ORDER BY score DESC
LIMIT $top_k
