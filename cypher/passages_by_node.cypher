// Passages by GDS node id, for a ranking computed outside Cypher.
UNWIND $nodes AS nid
MATCH (p:Passage) WHERE id(p) = nid
RETURN id(p) AS node, p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text
