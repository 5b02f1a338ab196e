// The state of a namespace's CO_OCCURRENCE pairs: 'lazy', 'building' or 'kept' (lock_namespace.cypher).
MATCH (n:Namespace {name: $namespace})
SET n.cooccurrence = $state
