// Namespaces whose CO_OCCURRENCE reset was interrupted (reset_cooccurrence.cypher).
MATCH (n:Namespace {cooccurrence: 'resetting'})
RETURN n.name AS namespace
