// Puts passages into their namespace's search indexes: its label and the folded title and text
// the full-text index reads (see namespace_indexes.cypher); the old one-index key goes.
CYPHER 25
UNWIND $rows AS row
MATCH (p:Passage {uid: row.uid})
SET p:$($label), p.ft_title = row.ft_title, p.ft_text = row.ft_text
REMOVE p.nskey
