// A namespace's passages for its archive (store/namespace_archive.py): every property but
// those an import derives again (uid, namespace, folded search text, `since`), and the vector.
MATCH (p:Passage {namespace: $namespace})
RETURN p {.*, uid: null, namespace: null, embedding: null, ft_title: null, ft_text: null,
          since: null} AS props,
       p.embedding AS embedding
