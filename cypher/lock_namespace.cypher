// Creates the namespace on first use and takes its write lock: writers to one namespace
// run one after another, so counts are never incremented twice for the same passage.
// `epoch` is new for every incarnation of the namespace (it is dropped with it), so names built
// from it and the version (GDS projections) are never reused after a drop.
// `cooccurrence` is the state of its CO_OCCURRENCE pairs: 'lazy' (none yet), 'building', or
// 'kept' (every write keeps them); a namespace made before the setting existed keeps them.
MERGE (n:Namespace {name: $namespace})
ON CREATE SET n.created = datetime(), n.version = 0, n.epoch = left(randomUUID(), 8),
              n.cooccurrence = $cooccurrence
SET n.lock = randomUUID()
RETURN n.version AS version, coalesce(n.cooccurrence, 'kept') AS cooccurrence
