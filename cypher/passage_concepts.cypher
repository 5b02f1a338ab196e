// The concepts of each passage (to undo its co-occurrence counts before it is removed).
UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
OPTIONAL MATCH (c:Concept)-[:HAS_PASSAGE]->(p)
RETURN p.uid AS passage, collect(c.uid) AS concepts
