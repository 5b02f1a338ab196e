MATCH (n:Namespace)
OPTIONAL MATCH (r:IngestRun {namespace: n.name})
WITH n, count(r) AS runs, sum(r.input_tokens + coalesce(r.cached_input_tokens, 0)) AS input_tokens,
     sum(r.output_tokens + coalesce(r.cached_output_tokens, 0)) AS output_tokens,
     sum(coalesce(r.tokens_unknown, 0)) AS tokens_unknown
RETURN n.name AS name, n.version AS version, n.passages AS passages, n.concepts AS concepts,
       n.extractor AS extractor, n.model AS model, runs, input_tokens, output_tokens, tokens_unknown,
       toString(n.created) AS created, toString(n.updated) AS updated
ORDER BY name
