// The namespace's documents read from files under a folder ($prefix: its absolute path and a
// separator): by document id (a file's absolute path) or by source (a JSONL record's file).
MATCH (p:Passage {namespace: $namespace})
WHERE p.doc_id STARTS WITH $prefix OR p.source STARTS WITH $prefix
RETURN DISTINCT p.doc_id AS doc_id, p.source AS source
