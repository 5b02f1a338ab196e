// The concepts the walk's projection links to each passage of $nodes (GDS node ids): concept
// types in $skip_types and concepts named by more than $hub_cap passages (0 = no cap) stay out,
// as in the projections, except the question's linked concepts ($keep), which a local walk's
// graph holds whatever their size. `degree`: how many relationships the concept has in the
// projection (its passages, and its co-occurrences where the walk takes them, $cooccurrence).
UNWIND $nodes AS pid
MATCH (c:Concept)-[:HAS_PASSAGE]->(p:Passage)
WHERE id(p) = pid AND p.namespace = $namespace
  AND (id(c) IN $keep OR (NOT c.type IN $skip_types AND ($hub_cap = 0 OR c.frequency <= $hub_cap)))
RETURN pid AS passage, id(c) AS concept, c.uid AS uid, c.name AS name,
       COUNT { (c)-[:HAS_PASSAGE]->(:Passage) }
         + CASE WHEN $cooccurrence THEN COUNT { (c)-[:CO_OCCURRENCE]-(:Concept) } ELSE 0 END AS degree
