MATCH (p:Passage {namespace: $namespace, doc_id: $doc_id})
RETURN p.uid AS uid
