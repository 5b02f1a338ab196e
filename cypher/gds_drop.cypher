CALL gds.graph.drop($graph, false) YIELD graphName
RETURN graphName
