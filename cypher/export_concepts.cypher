// A namespace's concepts for its archive: every property but uid and namespace, and the vector
// where one was written (concept vectors are written on first use).
MATCH (c:Concept {namespace: $namespace})
RETURN c {.*, uid: null, namespace: null, embedding: null} AS props, c.embedding AS embedding
