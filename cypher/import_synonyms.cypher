// SYNONYM edges of an archive, in the direction they were stored.
UNWIND $rows AS row
MATCH (a:Concept {uid: row.a})
MATCH (b:Concept {uid: row.b})
CREATE (a)-[r:SYNONYM {similarity: row.similarity}]->(b)
RETURN count(r) AS n
