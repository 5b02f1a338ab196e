// One CO_OCCURRENCE per unordered concept pair (stored from the smaller uid to the larger, read
// both ways); `count` = number of passages the pair shares. `delta` may be negative on deletes.
UNWIND $rows AS row
MATCH (a:Concept {uid: row.a})
MATCH (b:Concept {uid: row.b})
MERGE (a)-[r:CO_OCCURRENCE]->(b)
ON CREATE SET r.count = row.delta
ON MATCH SET r.count = r.count + row.delta
WITH r WHERE r.count <= 0
DELETE r
