// Records when a process last walked a namespace's projection, for every process's eviction
// order (gds.evict): one small node per namespace, apart from the Namespace node so that it
// never waits for the namespace's write lock.
MERGE (u:ProjectionUse {namespace: $namespace})
SET u.graph = $graph, u.at = datetime()
