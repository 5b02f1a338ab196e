// Passages named by the first id scheme whose ids change under the current one: those of
// documents whose id holds '#' or '%' (indexing/passage_ids.py). Runs under the namespace's lock.
MATCH (p:Passage {namespace: $namespace})
WHERE p.doc_id CONTAINS '#' OR p.doc_id CONTAINS '%'
RETURN elementId(p) AS node, p.id AS id, p.doc_id AS doc_id, p.position AS position;
// Two steps in one transaction: no new uid meets an old one still in place.
UNWIND $rows AS r
MATCH (p:Passage) WHERE elementId(p) = r.node
REMOVE p.uid;
UNWIND $rows AS r
MATCH (p:Passage) WHERE elementId(p) = r.node
SET p.id = r.id, p.uid = r.uid;
MATCH (n:Namespace {name: $namespace})
SET n.passage_ids = $scheme
