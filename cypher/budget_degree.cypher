// Budget selection "degree": each passage's number of concepts in the cheap graph (GDS degree
// over the undirected passage-concept projection $graph).
CALL gds.degree.stream($graph)
YIELD nodeId, score
WITH gds.util.asNode(nodeId) AS p, score
WHERE p:Passage
RETURN p.id AS id, score
