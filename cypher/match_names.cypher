// Concepts the question names: by normalised name, or by its inflection-insensitive stem.
CALL (){
  UNWIND $norms AS key
  MATCH (c:Concept {namespace: $namespace, norm: key})
  RETURN key, 'norm' AS by, c
  UNION
  UNWIND $stems AS key
  MATCH (c:Concept {namespace: $namespace, stem: key})
  RETURN key, 'stem' AS by, c
}
WITH key, by, c WHERE NOT c.type IN $skip_types
RETURN key, by, id(c) AS node, c.uid AS uid, c.key AS ckey, c.name AS name, c.type AS type,
       c.frequency AS frequency
