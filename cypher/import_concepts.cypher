// Concepts of an archive, with the frequency it recorded (an Entity label for entities).
UNWIND $rows AS row
CREATE (c:Concept {uid: row.uid})
SET c += row.props, c.namespace = $namespace, c.embedding = row.embedding
WITH c WHERE c.kind = 'entity'
SET c:Entity
