// Mention grounding: a passage is linked to each concept it names that its extraction did not
// give it (grounding.py), and marked grounded. MERGE keeps a rerun from adding anything, and an
// extracted link stays one.
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
SET p.grounded = true
WITH p, row
UNWIND row.concepts AS cuid
MATCH (c:Concept {uid: cuid})
MERGE (c)-[r:HAS_PASSAGE]->(p)
ON CREATE SET r.mention = true, r.new = true
WITH r, r.new AS added
REMOVE r.new
RETURN count(added) AS links
