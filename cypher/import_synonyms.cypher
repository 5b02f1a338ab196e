// SYNONYM edges of an archive, in the direction they were stored, grouped by their source
// concept (see import_cooccurrence.cypher).
UNWIND $rows AS row
MATCH (a:Concept {uid: row.a})
UNWIND row.out AS o
MATCH (b:Concept {uid: o.b})
CREATE (a)-[r:SYNONYM {similarity: o.similarity}]->(b)
RETURN count(r) AS n
