// Mention grounding: a passage is linked to each concept it names that its extraction did not
// give it (grounding.py), and marked grounded. The caller holds the namespace's lock, so a link
// found missing here cannot be made by anyone else before it is created: a rerun adds nothing,
// and an extracted link stays one. The passage's concepts are read once and the names it
// already has skipped before any seek; a concept that gained links gets its degree as frequency.
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
SET p.grounded = true
WITH p, row, COLLECT { MATCH (c:Concept)-[:HAS_PASSAGE]->(p) RETURN c.uid } AS have
UNWIND [u IN row.concepts WHERE NOT u IN have] AS cuid
MATCH (c:Concept {uid: cuid})
CREATE (c)-[:HAS_PASSAGE {mention: true}]->(p)
WITH c, count(*) AS added  // an aggregation: every link is made before a degree is read
SET c.frequency = COUNT { (c)-[:HAS_PASSAGE]->() }
RETURN sum(added) AS links
