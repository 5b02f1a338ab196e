// Every passage's embedding (for the in-process reference of the passage seeding).
MATCH (p:Passage {namespace: $namespace})
RETURN p.uid AS uid, p.embedding AS embedding
