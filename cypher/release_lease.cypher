// Gives an ingest's lease back (ingest_lease.cypher); expired leases of the namespace go too.
MATCH (l:IngestLease)
WHERE l.run_id = $run_id OR (l.namespace = $namespace AND l.until < datetime())
DELETE l
