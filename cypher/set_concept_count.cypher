// A passage's number of concepts after its links changed.
UNWIND $rows AS row
MATCH (p:Passage {uid: row.passage})
SET p.concept_count = row.count
