// For each linked concept, which of the flat rankings' passages name it (its support).
UNWIND $concepts AS cid
MATCH (c:Concept)-[:HAS_PASSAGE]->(p:Passage)
WHERE id(c) = cid AND id(p) IN $candidates
RETURN cid AS node, collect(id(p)) AS passages
