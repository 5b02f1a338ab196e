// Passages of an archive (store/namespace_archive.py), each with its namespace's label, its
// uid in the target and its folded search text; `since` 0: every projection may take them.
CYPHER 25
UNWIND $rows AS row
CREATE (p:Passage {uid: row.uid})
SET p:$($label), p += row.props, p.namespace = $namespace, p.embedding = row.embedding,
    p.ft_title = row.ft_title, p.ft_text = row.ft_text, p.since = 0
RETURN count(p) AS n
