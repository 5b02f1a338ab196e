// Which of these passages have not been grounded yet (written by a run that stopped before).
UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
WHERE p.grounded IS NULL
RETURN p.id AS id
