// Passages written before the full-text index existed get their namespace key.
MATCH (p:Passage {namespace: $namespace})
WHERE p.nskey IS NULL
CALL (p) { SET p.nskey = $nskey } IN TRANSACTIONS OF 10000 ROWS
