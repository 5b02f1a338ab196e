// Step 2 (see add_cooccurrence.cypher): create the pairs that did not exist yet.
UNWIND $rows AS row
MATCH (a:Concept {uid: row.a})
MATCH (b:Concept {uid: row.b})
CREATE (a)-[:CO_OCCURRENCE {pair: row.pair, count: row.delta}]->(b)
