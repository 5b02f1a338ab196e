// A submission that is a namespace archive's import, before it joins the queue: the archive's
// file name in the spool of the process that received it, and that process's host, since only
// a worker that sees the spool can run it.
MATCH (j:IngestJob {id: $id, state: 'receiving'})
SET j.kind = 'import', j.archive = $archive, j.spool_host = $host
