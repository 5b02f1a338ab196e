MATCH (n:Namespace {name: $namespace})
RETURN n.name AS name, n.version AS version, n.extractor AS extractor, n.model AS model,
       toString(n.created) AS created, toString(n.updated) AS updated,
       coalesce(n.cooccurrence, 'kept') AS cooccurrence,
       COUNT { (p:Passage {namespace: $namespace}) } AS passages,
       COUNT { MATCH (p:Passage {namespace: $namespace}) RETURN DISTINCT p.doc_id } AS documents,
       COUNT { (c:Concept {namespace: $namespace}) } AS concepts,
       COUNT { (c:Entity {namespace: $namespace}) } AS entities,
       COUNT { (:Concept {namespace: $namespace})-[:HAS_PASSAGE]->() } AS has_passage,
       COUNT { (:Concept {namespace: $namespace})-[:CO_OCCURRENCE]->() } AS co_occurrence,
       COLLECT { MATCH (r:IngestRun {namespace: $namespace}) RETURN r { .* } ORDER BY r.started } AS runs
