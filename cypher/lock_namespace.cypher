// Creates the namespace on first use and takes its write lock: writers to one namespace
// run one after another, so counts are never incremented twice for the same passage.
// `epoch` is new for every incarnation of the namespace (it is dropped with it), so names built
// from it and the version (GDS projections) are never reused after a drop; a writer that
// started on one incarnation checks it is still the same (a drop meanwhile fails the write
// instead of silently starting a new, partial namespace). `dropping` is set by a drop, under
// this same lock. `cooccurrence` is the state of its CO_OCCURRENCE pairs: 'lazy' (none yet),
// 'building', or 'kept' (every write keeps them); a namespace made before the setting existed
// keeps them. A new namespace's passages are in its own search indexes from the first write,
// and named by the current passage-id scheme (`passage_ids`; an older one is migrated).
MERGE (n:Namespace {name: $namespace})
ON CREATE SET n.created = datetime(), n.version = 0, n.epoch = left(randomUUID(), 8),
              n.cooccurrence = $cooccurrence, n.search = $search, n.passage_ids = $passage_ids
SET n.lock = randomUUID()
RETURN n.version AS version, coalesce(n.cooccurrence, 'kept') AS cooccurrence, n.epoch AS epoch,
       coalesce(n.dropping, false) AS dropping, n.passage_ids AS passage_ids
