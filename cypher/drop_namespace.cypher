// Deletes a namespace in batches so a large one does not need one huge transaction.
MATCH (x) WHERE (x:Passage OR x:Concept OR x:IngestRun) AND x.namespace = $namespace
CALL (x) { DETACH DELETE x } IN TRANSACTIONS OF 5000 ROWS
