// Creates the namespace on first use and takes its write lock: writers to one namespace
// run one after another, so counts are never incremented twice for the same passage.
MERGE (n:Namespace {name: $namespace})
ON CREATE SET n.created = datetime(), n.version = 0
SET n.lock = randomUUID()
RETURN n.version AS version
