// Every passage's GDS node id and embedding: the client keeps them per namespace version and
// scores passages against the question itself (one matrix product instead of a property scan).
MATCH (p:Passage {namespace: $namespace})
RETURN id(p) AS node, p.embedding AS embedding
