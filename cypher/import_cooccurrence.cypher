// CO_OCCURRENCE pairs of an archive, grouped by their source concept (one lookup of it for
// all its pairs), each with its pair key in the target (store/pairs.py).
UNWIND $rows AS row
MATCH (a:Concept {uid: row.a})
UNWIND row.out AS o
MATCH (b:Concept {uid: o.b})
CREATE (a)-[r:CO_OCCURRENCE {pair: o.pair, count: o.count}]->(b)
RETURN count(r) AS n
