// The token ledger and throughput of one ingest run, kept for later queries.
MERGE (r:IngestRun {run_id: $run.run_id})
SET r += $run, r.namespace = $namespace
