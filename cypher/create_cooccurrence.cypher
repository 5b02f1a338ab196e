// Step 2 (see add_cooccurrence.cypher): create the pairs that did not exist yet. Rows come grouped
// by their first concept ($groups = [{a, rows: [{b, pair, delta}]}]), so each source concept is
// looked up once, not once per pair: half the index seeks of one row per pair.
UNWIND $groups AS g
MATCH (a:Concept {uid: g.a})
UNWIND g.rows AS row
MATCH (b:Concept {uid: row.b})
CREATE (a)-[:CO_OCCURRENCE {pair: row.pair, count: row.delta}]->(b)
