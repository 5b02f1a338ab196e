// A page of a namespace's HAS_PASSAGE links for its archive, in passage uid order after $after,
// one record per passage: the keys of its concepts, each with whether it was grounded by mention
// (empty for a passage without concepts: its uid still moves the page on). A COLLECT subquery
// per passage streams, and one record a passage rather than one a link is most of an export's
// client time saved.
MATCH (p:Passage)
WHERE p.uid > $after AND p.uid < $end AND p.namespace = $namespace
WITH p ORDER BY p.uid LIMIT $page
RETURN p.uid AS uid, p.id AS passage, COLLECT {
  MATCH (c:Concept)-[r:HAS_PASSAGE]->(p)
  RETURN [c.key, coalesce(r.mention, false)]
} AS links
