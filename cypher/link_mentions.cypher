// Mention grounding: a passage is linked to each concept it names that its extraction did not
// give it (grounding.py), and marked grounded. The caller holds the namespace's lock, so a link
// found missing here cannot be made by anyone else before it is created: a rerun adds nothing,
// and an extracted link stays one.
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
SET p.grounded = true
WITH p, row
UNWIND row.concepts AS cuid
MATCH (c:Concept {uid: cuid})
WHERE NOT EXISTS { (c)-[:HAS_PASSAGE]->(p) }
CREATE (c)-[:HAS_PASSAGE {mention: true}]->(p)
RETURN count(*) AS links
