// Mention grounding's lookup, one word count at a time: which of $prefixes (normalised word
// sequences of new passages) are concept names of the namespace (their uids), and which begin a
// longer one (a space follows them in some name), so only those grow by the next word. Both
// are seeks of the (namespace, norm) index; prefixes that are neither are not returned.
UNWIND $prefixes AS prefix
WITH prefix,
     COLLECT { MATCH (c:Concept {namespace: $namespace, norm: prefix}) RETURN c.uid } AS uids,
     EXISTS { MATCH (c:Concept {namespace: $namespace}) WHERE c.norm STARTS WITH prefix + ' ' }
       AS longer
WHERE size(uids) > 0 OR longer
RETURN prefix, uids, longer
