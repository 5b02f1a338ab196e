// TERAG Browser kit: one row per namespace (or only $namespace): graph size, extractor, version
// and the LLM tokens its ingest runs spent. `:param namespace => null` lists every namespace.
// Paste these first (edit the values):
//   :param namespace => 'sample'
MATCH (n:Namespace)
WHERE $namespace IS NULL OR n.name = $namespace
CALL (n) {
  OPTIONAL MATCH (r:IngestRun {namespace: n.name})
  RETURN count(r) AS runs, sum(coalesce(r.input_tokens, 0)) AS input_tokens,
         sum(coalesce(r.output_tokens, 0)) AS output_tokens
}
RETURN n.name AS namespace, n.version AS version, n.extractor AS extractor, n.model AS model,
       COUNT { (p:Passage {namespace: n.name}) } AS passages,
       COUNT { (c:Concept {namespace: n.name}) } AS concepts,
       COUNT { (e:Entity {namespace: n.name}) } AS entities,
       COUNT { (:Concept {namespace: n.name})-[:HAS_PASSAGE]->() } AS has_passage,
       COUNT { (:Concept {namespace: n.name})-[:CO_OCCURRENCE]->() } AS co_occurrence,
       runs, input_tokens, output_tokens, toString(n.updated) AS updated
ORDER BY namespace
