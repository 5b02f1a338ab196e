// TERAG Browser kit: why a passage was retrieved for a question. The personalised PageRank
// restarts at the question's matched concepts ($concepts: the `matched_concepts` names of a
// retrieval, e.g. from the LangChain metadata or `terag query --json`) and spreads mass along
// HAS_PASSAGE and CO_OCCURRENCE edges. This shows the short routes that carried it to $passage:
//   1 hop   matched concept -HAS_PASSAGE-> passage
//   2 hops  matched concept -CO_OCCURRENCE {count}- concept -HAS_PASSAGE-> passage
// `route_weight` ranks them: 1 for a direct link, else the co-occurrence count (more shared
// passages = a stronger edge) divided by the bridge concept's frequency (a hub splits its mass
// over many passages). $passage is the passage id or its end (e.g. 'beetle.md').
// Paste these first (edit the values):
//   :param namespace => 'sample'
//   :param concepts => ['Beetle', 'Volkswagen']
//   :param passage => 'wolfsburg.md'
//   :param limit => 25
MATCH (p:Passage {namespace: $namespace})
WHERE p.id = $passage OR p.id ENDS WITH $passage
MATCH (m:Concept {namespace: $namespace})
WHERE m.norm IN [x IN $concepts | toLower(trim(x))] OR toLower(m.name) IN [x IN $concepts | toLower(trim(x))]
CALL (m, p) {
  MATCH path = (m)-[:HAS_PASSAGE]->(p)
  RETURN path, 1.0 AS route_weight
  UNION
  MATCH path = (m)-[r:CO_OCCURRENCE]-(x:Concept)-[:HAS_PASSAGE]->(p)
  WHERE x <> m
  RETURN path, toFloat(r.count) / coalesce(x.frequency, 1) AS route_weight
}
RETURN path, m.name AS matched_concept, length(path) AS hops, route_weight
ORDER BY hops, route_weight DESC
LIMIT $limit
