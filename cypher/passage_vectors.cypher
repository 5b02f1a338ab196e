// Every passage's uid, GDS node id and embedding: the client keeps them per namespace version and
// scores passages against the question itself (one matrix product instead of a property scan);
// the in-process reference reads the same rows.
MATCH (p:Passage {namespace: $namespace})
RETURN p.uid AS uid, id(p) AS node, p.embedding AS embedding
