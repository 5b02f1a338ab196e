// Passages of a namespace written before it had its own search indexes (or by an older
// version): their text is folded in Python and written back by `searchable_passages`.
MATCH (p:Passage {namespace: $namespace})
WHERE p.ft_text IS NULL
RETURN p.uid AS uid, p.title AS title, p.text AS text
LIMIT $limit
