// Mention grounding: a passage is linked to each concept it names that its extraction did not
// give it (grounding.py), and marked grounded. The caller holds the namespace's lock, so a link
// found missing here cannot be made by anyone else before it is created: a rerun adds nothing,
// and an extracted link stays one. The passage's concepts are read once and the names it
// already has skipped before any seek; `linked` is what gained a link, whose frequency changes.
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
SET p.grounded = true
WITH p, row, COLLECT { MATCH (c:Concept)-[:HAS_PASSAGE]->(p) RETURN c.uid } AS have
UNWIND [u IN row.concepts WHERE NOT u IN have] AS cuid
MATCH (c:Concept {uid: cuid})
CREATE (c)-[:HAS_PASSAGE {mention: true}]->(p)
RETURN count(*) AS links, collect(DISTINCT cuid) AS linked
