// The namespace's concepts with these normalised names (the vocabulary mentions are found in).
UNWIND $norms AS norm
MATCH (c:Concept {namespace: $namespace, norm: norm})
RETURN norm, c.uid AS uid
