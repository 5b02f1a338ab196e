// Which of these document ids the namespace holds passages of.
UNWIND $doc_ids AS doc_id
MATCH (p:Passage {namespace: $namespace, doc_id: doc_id})
RETURN DISTINCT p.doc_id AS doc_id
