// Concept frequency f(u) = number of passages that name the concept (extracted or mentioned);
// a concept exists while some passage's extraction has it, so one left with mentions only goes.
UNWIND $uids AS uid
MATCH (c:Concept {uid: uid})
WITH c, COUNT { (c)-[:HAS_PASSAGE]->(:Passage) } AS f,
     COUNT { (c)-[r:HAS_PASSAGE]->(:Passage) WHERE r.mention IS NULL } AS extracted
SET c.frequency = f
WITH c WHERE extracted = 0
DETACH DELETE c
