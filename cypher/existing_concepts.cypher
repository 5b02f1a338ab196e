// Which of these concepts exist already (pairs with a concept new to the graph cannot).
UNWIND $uids AS uid
MATCH (c:Concept {uid: uid})
RETURN c.uid AS uid
