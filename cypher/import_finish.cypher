// An import's last write: the namespace is whole; its counts are taken again (bump_version).
MATCH (n:Namespace {name: $namespace})
WHERE n.importing = $token
REMOVE n.importing
RETURN n.name AS name
