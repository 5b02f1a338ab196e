// The vector half of `flat.cypher`: the namespace's vector index, cut at $top with ties by uid.
CALL db.index.vector.queryNodes($vector_index, $top + $spare, $vector)
YIELD node, score
WITH node, score ORDER BY score DESC, node.uid LIMIT $top
RETURN collect([id(node), score]) AS vector, head(collect(node.id)) AS vector_first
