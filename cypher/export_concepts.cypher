// A page of a namespace's concepts for its archive, in uid order after $after: every property
// but uid and namespace, and the vector where one was written (concept vectors are written on
// first use).
MATCH (c:Concept)
WHERE c.uid > $after AND c.uid < $end AND c.namespace = $namespace
WITH c ORDER BY c.uid LIMIT $page
RETURN c.uid AS uid, c {.*, uid: null, namespace: null, embedding: null} AS props,
       c.embedding AS embedding
