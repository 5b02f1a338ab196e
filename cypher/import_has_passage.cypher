// HAS_PASSAGE links of an archive, by the uids of their ends in the target; the count made is
// checked against the rows sent (a link to a node the archive lacks is refused, not skipped).
UNWIND $rows AS row
MATCH (c:Concept {uid: row.concept})
MATCH (p:Passage {uid: row.passage})
CREATE (c)-[r:HAS_PASSAGE]->(p)
SET r.mention = CASE WHEN row.mention THEN true END
RETURN count(r) AS n
