// Store concept embeddings; a concept another process embedded meanwhile keeps its own.
UNWIND $rows AS row
MATCH (c:Concept {uid: row.uid})
WHERE c.embedding IS NULL
SET c.embedding = row.embedding
