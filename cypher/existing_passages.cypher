// Which of these passages are already in the namespace, with their content hash.
UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
RETURN p.id AS id, p.hash AS hash
