CALL gds.graph.list() YIELD graphName
WHERE graphName STARTS WITH $prefix
RETURN graphName
