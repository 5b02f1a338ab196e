// These passages' pairs are now in the CO_OCCURRENCE counts (see unpaired_passages.cypher).
UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
SET p.paired = true
