// A namespace's documents for its archive: each id with its number of passages, by id (the same
// namespace exports the same bytes).
MATCH (p:Passage {namespace: $namespace})
RETURN p.doc_id AS id, count(*) AS passages
ORDER BY id
