// The concepts of each passage (to undo its co-occurrence counts before it is removed), and
// whether its pairs were counted while a CO_OCCURRENCE build was under way.
UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
OPTIONAL MATCH (c:Concept)-[r:HAS_PASSAGE]->(p)
WITH p, collect(CASE WHEN r.mention IS NULL THEN c.uid END) AS concepts, collect(c.uid) AS linked
// `concepts`: its extraction's (what pairs count); `linked`: also the concepts it mentions
RETURN p.uid AS passage, concepts, linked, p.paired AS paired
