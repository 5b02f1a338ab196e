// Every change bumps the namespace version; retrieval rebuilds its GDS projection when it differs.
// The passage and concept counts go up by $added ({passages, concepts}) from a write that only
// added nodes, or are counted again when $added is null (a delete, a merge): each count is an
// index scan of the namespace, whose cost grows with it (docs/benchmarks.md, "Scale").
MATCH (n:Namespace {name: $namespace})
WITH n, $added IS NULL OR n.passages IS NULL OR n.concepts IS NULL AS recount
SET n.version = n.version + 1, n.updated = datetime(),
    n.passages = CASE WHEN recount THEN COUNT { (p:Passage {namespace: $namespace}) }
                      ELSE n.passages + $added.passages END,
    n.concepts = CASE WHEN recount THEN COUNT { (c:Concept {namespace: $namespace}) }
                      ELSE n.concepts + $added.concepts END
SET n += $meta
RETURN n.version AS version
