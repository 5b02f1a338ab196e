// One job by id (a removed one is a tombstone: `expired` set).
MATCH (j:IngestJob {id: $id})
WHERE j.state <> 'receiving'
RETURN j {.*} AS job
