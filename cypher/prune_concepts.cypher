// After links were removed: the frequency again, and a concept goes once no passage's extraction
// has it (one left with mentions only is not a concept of the namespace any more).
UNWIND $uids AS uid
MATCH (c:Concept {uid: uid})
WITH c, COUNT { (c)-[:HAS_PASSAGE]->() } AS f,
     COUNT { (c)-[r:HAS_PASSAGE]->() WHERE r.mention IS NULL } AS extracted
SET c.frequency = f
WITH c WHERE extracted = 0
DETACH DELETE c
