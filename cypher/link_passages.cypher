// HAS_PASSAGE points from a concept to each passage it occurs in. The passages are new in this
// transaction (unchanged ones are skipped, changed ones deleted first), so CREATE cannot duplicate.
// Each linked concept's frequency f(u), the number of passages that name it, is then its degree:
// read from the node, not a scan of its relationships, and here rather than in a statement of
// its own that would seek every concept again.
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
UNWIND row.concepts AS cuid
MATCH (c:Concept {uid: cuid})
CREATE (c)-[:HAS_PASSAGE]->(p)
WITH c, count(*) AS links  // an aggregation: every link is made before a degree is read
SET c.frequency = COUNT { (c)-[:HAS_PASSAGE]->() }
