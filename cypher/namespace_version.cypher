MATCH (n:Namespace {name: $namespace})
RETURN n.version AS version, n.passages AS passages, n.concepts AS concepts
