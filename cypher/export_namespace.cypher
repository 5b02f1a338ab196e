// A namespace's record and ingest runs (the token ledger) for its archive.
MATCH (n:Namespace {name: $namespace})
RETURN properties(n) AS props,
       COLLECT { MATCH (r:IngestRun {namespace: $namespace}) RETURN properties(r) } AS runs
