// A question's neighbourhood as a GDS graph, built per query: the seed passages and the linked
// concepts' passages, every concept of those passages named by at most $hub_cap passages (and
// the linked concepts), and all passages of those concepts; relationships readable both ways.
// Its size depends on the question and the cap, not on the corpus. Seeds without concepts, and
// the $lone seeds (restart nodes that do not grow the graph), are nodes of their own: a
// restart node must be in the graph. GDS reads the rows with $concurrency threads: its default
// of 4 cost 2-3x the time on a small graph (140 vs 40-70 ms for 9k relationships on 2 cores),
// the threads' coordination outweighing the work.
CALL () {
  UNWIND $seeds AS sid
  MATCH (p:Passage) WHERE id(p) = sid
  RETURN p
  UNION
  UNWIND $concepts AS cid
  MATCH (c:Concept)-[:HAS_PASSAGE]->(p:Passage) WHERE id(c) = cid
  RETURN p
}
WITH collect(p) AS near
CALL (near) {
  UNWIND near AS p
  MATCH (c:Concept)-[:HAS_PASSAGE]->(p)
  WHERE c.frequency <= $hub_cap AND NOT c.type IN $skip_types
  RETURN DISTINCT c
  UNION
  UNWIND $concepts AS cid
  MATCH (c:Concept) WHERE id(c) = cid
  RETURN c
}
WITH near, collect(c) AS concepts
CALL (near, concepts) {
  UNWIND concepts AS c
  MATCH (c)-[:HAS_PASSAGE]->(q:Passage)
  RETURN c AS source, q AS target
  UNION ALL
  UNWIND near AS p
  RETURN p AS source, null AS target
  UNION ALL
  UNWIND $lone AS sid
  MATCH (p:Passage) WHERE id(p) = sid
  RETURN p AS source, null AS target
}
WITH gds.graph.project($graph, source, target, {},
       {undirectedRelationshipTypes: ['*'], readConcurrency: $concurrency}) AS g
RETURN g.nodeCount AS nodes, g.relationshipCount AS relationships
