MATCH (n:Namespace {name: $namespace})
DETACH DELETE n
