// The GDS node ids an in-memory graph holds (to keep a restart vector to nodes it has).
CALL gds.degree.stream($graph) YIELD nodeId
RETURN nodeId AS node
