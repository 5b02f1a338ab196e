// One hop of a neighbourhood from the frontier ($ids: element ids) over the walk's own edges,
// inside the namespace. The caller grows the neighbourhood hop by hop (a path length cannot be
// a parameter) and asks for a few rows more than its node budget.
UNWIND $ids AS nid
MATCH (n) WHERE elementId(n) = nid
MATCH (n)-[r:HAS_PASSAGE|CO_OCCURRENCE|SYNONYM]-(m)
WHERE m.namespace = $namespace
RETURN elementId(startNode(r)) AS source, elementId(endNode(r)) AS target, type(r) AS rel,
       elementId(m) AS id, CASE WHEN m:Passage THEN 'Passage' ELSE 'Concept' END AS label,
       coalesce(m.name, m.title, m.id) AS name, m.type AS type, m.frequency AS frequency,
       m.id AS passage_id, m.doc_id AS doc_id
LIMIT $limit
