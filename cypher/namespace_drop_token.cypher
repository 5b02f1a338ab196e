// The token of the drop that marked the namespace last (mark_dropping.cypher), if any.
MATCH (n:Namespace {name: $namespace})
RETURN n.drop_token AS token
