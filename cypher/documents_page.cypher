// A page of a namespace's documents, by id: each with its title and source (of its first
// passage), its passage count and its last page.
MATCH (p:Passage {namespace: $namespace})
WITH p ORDER BY p.doc_id, p.position
WITH p.doc_id AS id, collect(p.title)[0] AS title, count(*) AS passages,
     collect(p.source)[0] AS source, max(p.page_end) AS pages
RETURN id, title, passages, source, pages
ORDER BY id SKIP $offset LIMIT $limit
