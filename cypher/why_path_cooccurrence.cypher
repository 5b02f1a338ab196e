// CO_OCCURRENCE relationships from a linked concept ($sources) to a concept of the passage
// explained ($targets), in the walk's direction: both ways when $undirected, else as stored
// (the directed projection walks them from their start).
MATCH (a:Concept)-[r:CO_OCCURRENCE]-(b:Concept)
WHERE id(a) IN $sources AND id(b) IN $targets AND a <> b
  AND ($undirected OR startNode(r) = a)
RETURN DISTINCT id(a) AS source, id(b) AS target
LIMIT $limit
