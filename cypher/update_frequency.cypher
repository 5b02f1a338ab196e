// Concept frequency f(u) = number of passages the concept occurs in; concepts left with none go.
UNWIND $uids AS uid
MATCH (c:Concept {uid: uid})
WITH c, COUNT { (c)-[:HAS_PASSAGE]->(:Passage) } AS f
SET c.frequency = f
WITH c WHERE f = 0
DETACH DELETE c
