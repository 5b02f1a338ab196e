// HAS_PASSAGE links of an archive, grouped by passage (one lookup of it for all its links), by
// the uids of their ends in the target; the count made is checked against the links sent (a
// link to a node the archive lacks is refused, not skipped).
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
UNWIND row.links AS l
MATCH (c:Concept {uid: l.concept})
CREATE (c)-[r:HAS_PASSAGE]->(p)
SET r.mention = CASE WHEN l.mention THEN true END
RETURN count(r) AS n
