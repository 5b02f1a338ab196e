// New passages, each with its namespace's label (its search indexes read it), the folded title
// and text the full-text index reads, and `since`: the namespace version this write creates,
// so a walk on a projection built before it never takes the node for one it knew. Its provenance
// (source, heading path, pages, character offsets) is `row.provenance` (nulls leave a property out).
CYPHER 25
UNWIND $rows AS row
MERGE (p:Passage {uid: row.uid})
SET p:$($label), p.namespace = $namespace, p.id = row.id, p.doc_id = row.doc_id,
    p.position = row.position, p.title = row.title, p.text = row.text, p.hash = row.hash,
    p.concept_count = row.concept_count, p.embedding = row.embedding, p.heading = row.heading,
    p.ft_title = row.ft_title, p.ft_text = row.ft_text, p.since = $since, p += row.provenance
