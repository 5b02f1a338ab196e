// Concepts are identified strictly by (type, normalised name); the first display name seen wins.
UNWIND $rows AS row
MERGE (c:Concept {uid: row.uid})
ON CREATE SET c.namespace = $namespace, c.key = row.key, c.type = row.type, c.norm = row.norm,
              c.name = row.name, c.kind = row.kind, c.frequency = 0, c.embedding = row.embedding,
              c.stem = row.stem
WITH c, row WHERE row.kind = 'entity'
SET c:Entity
