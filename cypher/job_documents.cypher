// A job's documents `$from` <= seq < `$to`, in order.
MATCH (d:IngestJobDocument {job_id: $job_id})
WHERE d.seq >= $from AND d.seq < $to
RETURN d {.id, .text, .title, .source, .is_passage, .title_is_name, .pages} AS document
ORDER BY d.seq
