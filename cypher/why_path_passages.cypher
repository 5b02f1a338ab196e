// The passages of $nodes (GDS node ids) in the namespace: their ids and titles, for the steps
// of a walk's path.
UNWIND $nodes AS pid
MATCH (p:Passage) WHERE id(p) = pid AND p.namespace = $namespace
RETURN pid AS node, p.id AS id, p.title AS title, p.doc_id AS doc_id
