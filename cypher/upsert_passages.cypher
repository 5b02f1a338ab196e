UNWIND $rows AS row
MERGE (p:Passage {uid: row.uid})
SET p.namespace = $namespace, p.id = row.id, p.doc_id = row.doc_id, p.position = row.position,
    p.title = row.title, p.text = row.text, p.hash = row.hash, p.concept_count = row.concept_count,
    p.embedding = row.embedding, p.heading = row.heading, p.nskey = $nskey
