// How many jobs a key has submitted that have not finished (its share of the queue).
MATCH (j:IngestJob)
WHERE j.state IN ['receiving', 'queued', 'running'] AND j.key = $key
RETURN count(j) AS n
