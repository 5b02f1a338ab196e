// An ingest holds a lease of its own while it writes (renewed by a heartbeat, given back at the
// end): readers keep their projection while any lease of the namespace runs instead of
// projecting again after every batch. A killed ingest's lease runs out by itself. Leases are
// nodes of their own, so renewing one never waits for the namespace's write lock, and one
// ingest giving its lease back leaves another's in force.
MERGE (l:IngestLease {run_id: $run_id})
SET l.namespace = $namespace, l.until = datetime() + duration({seconds: $seconds})
