// Budget mode: core passages whose LLM concepts are not merged yet, as passages to extract.
MATCH (p:Passage {namespace: $namespace})
WHERE p.core_selected AND NOT coalesce(p.core_merged, false)
RETURN p.id AS id, p.doc_id AS doc_id, p.position AS position, p.title AS title, p.text AS text,
       coalesce(p.heading, "") AS heading
ORDER BY p.id
