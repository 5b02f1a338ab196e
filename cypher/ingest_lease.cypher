// An ingest holds this lease while it writes (renewed with every batch, given back at the end):
// readers keep their projection meanwhile instead of projecting again after every batch. A
// killed ingest's lease runs out by itself.
MATCH (n:Namespace {name: $namespace})
SET n.ingest_until = CASE WHEN $seconds > 0 THEN datetime() + duration({seconds: $seconds}) END
