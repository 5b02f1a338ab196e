UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
DETACH DELETE p
