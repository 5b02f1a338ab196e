// Remove the HAS_PASSAGE links of these concepts to their passage (a core passage's spaCy concepts
// that its merged extraction no longer has).
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
UNWIND row.concepts AS cuid
MATCH (c:Concept {uid: cuid})-[r:HAS_PASSAGE]->(p)
DELETE r
