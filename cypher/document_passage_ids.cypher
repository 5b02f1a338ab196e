// The passages the namespace holds for these documents (to find those a changed document lost).
UNWIND $doc_ids AS doc_id
MATCH (p:Passage {namespace: $namespace, doc_id: doc_id})
RETURN p.doc_id AS doc_id, p.id AS id
