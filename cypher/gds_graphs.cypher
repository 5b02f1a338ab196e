// The project's GDS graphs (names start with $prefix), with what eviction and `terag stats` need.
CALL gds.graph.list() YIELD graphName, sizeInBytes, nodeCount, relationshipCount, creationTime
WHERE graphName STARTS WITH $prefix
RETURN graphName, sizeInBytes, nodeCount, relationshipCount, creationTime
