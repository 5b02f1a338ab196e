// HAS_PASSAGE points from a concept to each passage it occurs in.
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
UNWIND row.concepts AS cuid
MATCH (c:Concept {uid: cuid})
MERGE (c)-[:HAS_PASSAGE]->(p)
