// HAS_PASSAGE points from a concept to each passage it occurs in. The passages are new in this
// transaction (unchanged ones are skipped, changed ones deleted first), so CREATE cannot duplicate.
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
UNWIND row.concepts AS cuid
MATCH (c:Concept {uid: cuid})
CREATE (c)-[:HAS_PASSAGE]->(p)
