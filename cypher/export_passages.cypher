// A page of a namespace's passages for its archive (store/namespace_export.py), in uid order
// after $after: every property but those an import derives again (uid, namespace, folded search
// text, `since`), and the vector. Pages keep each statement short whatever the namespace's size.
MATCH (p:Passage)
WHERE p.uid > $after AND p.uid < $end AND p.namespace = $namespace
WITH p ORDER BY p.uid LIMIT $page
RETURN p.uid AS uid,
       p {.*, uid: null, namespace: null, embedding: null, ft_title: null, ft_text: null,
          since: null} AS props,
       p.embedding AS embedding
