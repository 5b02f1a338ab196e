// Every change bumps the namespace version; retrieval rebuilds its GDS projection when it differs.
MATCH (n:Namespace {name: $namespace})
SET n.version = n.version + 1, n.updated = datetime(),
    n.passages = COUNT { (p:Passage {namespace: $namespace}) },
    n.concepts = COUNT { (c:Concept {namespace: $namespace}) }
SET n += $meta
RETURN n.version AS version
