// A group is written: the job's cursor moves past its documents and the lease is given back
// (the next claim picks what runs next). Only the worker that holds the lease, at the cursor it
// started from, records it; the last group ends the job ('cancelled' if asked meanwhile).
MATCH (j:IngestJob {id: $id})
WHERE j.lease_owner = $owner AND j.state = 'running' AND j.documents_done = $done
SET j.documents_done = $done + $documents, j.estimate_done = j.estimate_done + $estimate,
    j.passages_done = j.passages_done + $report.passages_total,
    j.passages_new = j.passages_new + $report.passages_new,
    j.passages_unchanged = j.passages_unchanged + $report.passages_unchanged,
    j.passages_replaced = j.passages_replaced + $report.passages_replaced,
    j.input_tokens = j.input_tokens + $report.input_tokens,
    j.output_tokens = j.output_tokens + $report.output_tokens,
    j.tokens_unknown = coalesce(j.tokens_unknown, 0) + $report.tokens_unknown,
    j.errors = (j.errors + $warnings)[..$max_errors],
    j.preempted = 0, j.attempts = 0, j.not_before = null,
    j.lease_owner = null, j.lease_until = null, j.waiting_since = datetime(),
    j.group_done = null, j.group_total = null, j.group_estimate = null, j.document = null
WITH j, j.documents_done >= j.documents_total AS last
SET j.state = CASE WHEN NOT last THEN j.state WHEN j.cancel_requested THEN 'cancelled'
                   ELSE 'succeeded' END,
    j.finished = CASE WHEN last THEN datetime() END
RETURN j.state AS state
