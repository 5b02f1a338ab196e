// CO_OCCURRENCE pairs of an archive, with their pair key in the target (store/pairs.py).
UNWIND $rows AS row
MATCH (a:Concept {uid: row.a})
MATCH (b:Concept {uid: row.b})
CREATE (a)-[r:CO_OCCURRENCE {pair: row.pair, count: row.count}]->(b)
RETURN count(r) AS n
