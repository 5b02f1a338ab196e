// The concepts of each passage (to undo its co-occurrence counts before it is removed), and
// whether its pairs were counted while a CO_OCCURRENCE build was under way.
UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
OPTIONAL MATCH (c:Concept)-[:HAS_PASSAGE]->(p)
RETURN p.uid AS passage, collect(c.uid) AS concepts, p.paired AS paired
