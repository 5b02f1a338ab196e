// Bridge passages of the walk: a passage p named by a concept of $sources (GDS node ids: the
// question's linked concepts and the seed passages' concepts) and by another of $targets (the
// concepts of the passage explained, $passage), so mass crosses concept -> p -> concept. Only
// concepts the projection holds are passed in. `degree`: p's concepts in the projection (as
// `why_path_concepts` keeps them); `linked`: whether a linked concept ($keep) names p (a
// local walk's graph grows from such passages and the seeds only).
// It starts from the few target concepts (at most $hub_cap passages each, where capped).
UNWIND $targets AS b
MATCH (cb:Concept)-[:HAS_PASSAGE]->(p:Passage)<-[:HAS_PASSAGE]-(ca:Concept)
WHERE id(cb) = b AND id(ca) IN $sources AND ca <> cb AND id(p) <> $passage
  AND p.namespace = $namespace
WITH id(ca) AS a, b, p
LIMIT $limit
RETURN a AS source, b AS target, id(p) AS node, p.id AS id, p.title AS title, p.doc_id AS doc_id,
       COUNT { (c:Concept)-[:HAS_PASSAGE]->(p)
               WHERE id(c) IN $keep OR (NOT c.type IN $skip_types AND ($hub_cap = 0 OR c.frequency <= $hub_cap)) }
         AS degree,
       EXISTS { (l:Concept)-[:HAS_PASSAGE]->(p) WHERE id(l) IN $keep } AS linked
