// Passages by GDS node id, for a ranking computed outside Cypher.
UNWIND $nodes AS nid
MATCH (p:Passage) WHERE id(p) = nid
RETURN id(p) AS node, p.id AS id, p.doc_id AS doc_id, p.title AS title, p.text AS text,
       p {.source, .heading_path, .page_start, .page_end, .char_start, .char_end} AS provenance
