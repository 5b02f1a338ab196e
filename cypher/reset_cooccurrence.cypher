// Removes a namespace's CO_OCCURRENCE pairs and their bookkeeping, in batches, while its state
// is 'resetting' (writers leave pairs alone then); it is set 'lazy' afterwards, so the next walk
// that reads pairs builds them again (CooccurrenceBuilder.reset_cooccurrence).
MATCH (:Concept {namespace: $namespace})-[r:CO_OCCURRENCE]->()
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;
MATCH (p:Passage {namespace: $namespace}) WHERE p.paired IS NOT NULL
CALL (p) { REMOVE p.paired } IN TRANSACTIONS OF 10000 ROWS
