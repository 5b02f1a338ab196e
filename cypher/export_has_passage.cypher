// A namespace's HAS_PASSAGE links for its archive, one record per passage: the keys of its
// concepts, each with whether it was grounded by mention. A COLLECT subquery per passage
// streams (a grouping aggregation would hold every link in the server's memory first), and one
// record a passage rather than one a link is most of an export's client time saved.
MATCH (p:Passage {namespace: $namespace})
WITH p, COLLECT {
  MATCH (c:Concept)-[r:HAS_PASSAGE]->(p)
  RETURN [c.key, coalesce(r.mention, false)]
} AS links
WHERE size(links) > 0
RETURN p.id AS passage, links
