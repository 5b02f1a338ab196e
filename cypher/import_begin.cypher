// An import's first write to its target (which lock_namespace.cypher has just created or
// locked): the archive's record of how it was built, the state of its CO_OCCURRENCE pairs, and
// `importing`, the mark of a namespace whose import has not finished (a failed one is dropped).
MATCH (n:Namespace {name: $namespace})
SET n += $meta, n.cooccurrence = $cooccurrence, n.importing = $token
