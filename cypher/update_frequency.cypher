// Concept frequency f(u) = number of passages that name the concept (extracted or mentioned),
// after links were only added: the count comes from the node's degree, not a scan of its
// relationships (a hub named by thousands of passages costs the same as any concept).
UNWIND $uids AS uid
MATCH (c:Concept {uid: uid})
SET c.frequency = COUNT { (c)-[:HAS_PASSAGE]->() }
