// Every concept of the namespace by normalised name (the vocabulary of a small namespace).
MATCH (c:Concept {namespace: $namespace})
RETURN c.norm AS norm, c.uid AS uid
