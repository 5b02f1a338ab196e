"""Ingest jobs kept in Neo4j, so they outlive the process that took them and every process of
the service on one database shares them: (:IngestJob) nodes with their state, progress and
lease, and (:IngestJobDocument) nodes holding the submitted documents until the job ends.

The documents are stored in the database rather than in a folder under TERAG_HOME because
several `terag serve` processes on one Neo4j (on several machines) must all be able to run any
job; they are written in batched transactions, and the job joins the queue only once all are.

Who runs what is decided by leases: a worker claims a job (cypher/job_claim.cypher) with a
lease it renews while it writes one group of documents; a worker that dies stops renewing, and
once the lease runs out any worker claims the job again and resumes at the group after its last
recorded one (re-adding documents skips what is already indexed, so nothing is indexed twice).
Times are the database's clock, never a process's.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from terag_neo4j import tracing
from terag_neo4j.core.documents import Document
from terag_neo4j.errors import TeragError
from terag_neo4j.service.stored_job import StoredJob
from terag_neo4j.store.cypher import cypher_statements, run_cypher

if TYPE_CHECKING:
    from terag_neo4j.indexing.report import IngestReport
    from terag_neo4j.store import GraphStore

log = logging.getLogger(__name__)

# Documents (and characters) per write of a submission: large enough that batching pays,
# small enough that one transaction never holds a whole 32 MiB upload.
WRITE_ROWS = 1000
WRITE_CHARS = 4 * 2**20
DELETE_BATCH = 5000
MAX_ERRORS = 100  # errors kept on a job (a bad corpus must not grow one node without bound)
TOMBSTONE_S = 30 * 86400  # how long a removed job still answers "expired" rather than unknown
RECEIVING_S = 3600  # a submission not finished in this long was abandoned (its process died)
# About as many characters as a passage of `chunk_tokens` tokens holds: groups are cut by this
# estimate, so cutting them needs no tokenizer (the indexer counts the real passages).
CHARS_PER_TOKEN = 4


def estimate_passages(doc: Document, chunk_tokens: int) -> int:
    if doc.is_passage:
        return 1
    return max(1, math.ceil(len(doc.text) / (chunk_tokens * CHARS_PER_TOKEN)))


class JobLimit(TeragError):
    """A key at its limit of unfinished jobs or of submissions per minute: nothing created."""

    def __init__(self, unfinished: int, recent: int) -> None:
        super().__init__(f"{unfinished} unfinished, {recent} in the last minute")
        self.unfinished = unfinished
        self.recent = recent


@dataclass(frozen=True)
class Beat:
    """What a heartbeat found: the lease still ours, a cancel asked, another tenant waiting."""

    mine: bool
    cancel: bool
    others: bool


class JobStore:
    """The job queries (cypher/job_*.cypher) over one `GraphStore`; jobs submitted here go to
    `queue`, and only that queue's jobs are claimed (any job is read and cancelled)."""

    def __init__(self, store: GraphStore, queue: str = "default") -> None:
        self.store = store
        self.queue = queue
        self._schema_done = False

    def ensure_schema(self) -> None:
        if self._schema_done:
            return

        def run() -> None:
            with self.store.session() as s, tracing.statement("job_schema"):
                for stmt in cypher_statements("job_schema"):
                    s.run(stmt).consume()

        self.store.call(run)
        self._schema_done = True

    def _write(self, name: str, **params: Any) -> dict[str, Any] | None:
        """One statement of cypher/<name>.cypher in a write transaction; its one row, if any."""

        def work(tx: ManagedTransaction) -> dict[str, Any] | None:
            rec = run_cypher(tx, name, **params).single()
            return rec.data() if rec else None

        return self.store.write_tx(work)

    # ------------------------------------------------------------------ submitting

    def unfinished_by_key(self, key: str) -> int:
        return int(self.store.read("job_unfinished_by_key", key=key)[0]["n"])

    def submit(
        self,
        namespace: str,
        documents: Sequence[Document],
        key: str,
        chunk_tokens: int,
        max_unfinished: int = 1_000_000,
        per_minute: int = 1_000_000,
    ) -> StoredJob:
        """Write the job and its documents, then queue it: a process that dies meanwhile leaves
        a job no one sees (removed by the sweep), never a half-stored one that runs. `JobLimit`
        when `key` has `max_unfinished` unfinished jobs or submitted `per_minute` in the last
        minute (counted in the transaction that creates the job)."""
        self.ensure_schema()
        job_id = uuid.uuid4().hex[:16]
        estimates = [estimate_passages(d, chunk_tokens) for d in documents]
        self._create(
            job_id, namespace, key, len(documents), sum(estimates), max_unfinished, per_minute
        )
        for batch in _batches(documents, estimates):
            self._write("job_add_documents", job_id=job_id, documents=batch)
        return self._queue(job_id)

    def submit_import(
        self,
        job_id: str,
        namespace: str,
        archive: str,
        host: str,
        key: str,
        counts: dict[str, int],
        max_unfinished: int = 1_000_000,
        per_minute: int = 1_000_000,
    ) -> StoredJob:
        """Queue the import of the archive spooled as `archive` (a file name in the spool) into
        `namespace`: one job, counted against the key's limits as an ingest is, whose progress
        is the archive's passages (`counts` is its manifest's)."""
        self.ensure_schema()
        self._create(
            job_id,
            namespace,
            key,
            int(counts.get("documents", 0)),
            int(counts.get("passages", 0)),
            max_unfinished,
            per_minute,
        )
        self._write("job_set_import", id=job_id, archive=archive, host=host)
        return self._queue(job_id)

    def _create(
        self,
        job_id: str,
        namespace: str,
        key: str,
        documents_total: int,
        estimate_total: int,
        max_unfinished: int,
        per_minute: int,
    ) -> None:
        """Create the job's node unqueued, counting the key's jobs in the same transaction;
        `JobLimit` when it has too many."""
        row = self._write(
            "job_create",
            id=job_id,
            namespace=namespace,
            key=key,
            queue=self.queue,
            documents_total=documents_total,
            estimate_total=estimate_total,
            max_unfinished=max_unfinished,
            per_minute=per_minute,
        )
        if not row or not row["created"]:
            found = row or {}
            raise JobLimit(int(found.get("unfinished", 0)), int(found.get("recent", 0)))

    def _queue(self, job_id: str) -> StoredJob:
        """Queue a job whose node and inputs are written: only now can a worker claim it."""
        self._write("job_queue", id=job_id)
        found = self.get(job_id)
        assert found is not None
        return found

    # ------------------------------------------------------------------ reading

    def get(self, job_id: str) -> StoredJob | None:
        rows = self.store.read("job_get", id=job_id)
        return StoredJob(rows[0]["job"]) if rows else None

    def recent(
        self, namespaces: Sequence[str] | None, limit: int = 1000, offset: int = 0
    ) -> list[StoredJob]:
        """The `limit` newest jobs after the `offset` newest, oldest first."""
        ns = sorted(namespaces) if namespaces is not None else None
        rows = self.store.read("job_list", namespaces=ns, limit=limit, offset=offset)
        return [StoredJob(r["job"]) for r in rows]

    def cancel(self, job_id: str) -> None:
        self._write("job_cancel", id=job_id)

    # ------------------------------------------------------------------ the worker's side

    def claim(self, owner: str, lease_s: float) -> StoredJob | None:
        self.ensure_schema()
        if not self.store.read("job_pending", queue=self.queue)[0]["pending"]:
            return None

        def work(tx: ManagedTransaction) -> dict[str, Any] | None:
            run_cypher(tx, "job_lock_queue").consume()
            run_cypher(tx, "job_end_cancelled").consume()
            rec = run_cypher(
                tx,
                "job_claim",
                owner=owner,
                lease_ms=int(lease_s * 1000),
                queue=self.queue,
            ).single()
            return dict(rec["job"]) if rec else None

        row = self.store.write_tx(work)
        return StoredJob(row) if row else None

    def heartbeat(
        self,
        job_id: str,
        owner: str,
        lease_s: float,
        wait_s: float,
        group: dict[str, Any] | None = None,
    ) -> Beat:
        """Renew the lease; `group` (done, total, estimate, document) is the group's progress."""
        rec = self._write(
            "job_heartbeat",
            id=job_id,
            owner=owner,
            lease_ms=int(lease_s * 1000),
            wait_ms=int(wait_s * 1000),
            group=group,
        )
        if rec is None:  # the job is gone (swept): nothing to renew
            return Beat(False, True, False)
        return Beat(bool(rec["mine"]), bool(rec["cancel"]), bool(rec["others"]))

    def next_group(
        self, job_id: str, start: int, max_estimate: int, max_documents: int
    ) -> tuple[list[Document], int]:
        """The documents from `start` on, up to about `max_estimate` passages (at least one
        document), and their estimate."""
        sizes = self.store.read(
            "job_document_sizes", job_id=job_id, **{"from": start}, limit=max_documents
        )
        end, estimate = start, 0
        for r in sizes:
            if end > start and estimate + int(r["estimate"]) > max_estimate:
                break
            end, estimate = int(r["seq"]) + 1, estimate + int(r["estimate"])
        rows = self.store.read("job_documents", job_id=job_id, **{"from": start, "to": end})
        docs = [_document(r["document"]) for r in rows]
        return docs, estimate

    def group_done(
        self,
        job_id: str,
        owner: str,
        done: int,
        documents: int,
        estimate: int,
        report: IngestReport,
    ) -> str | None:
        """Record a written group; the job's state after it, or None where this worker no
        longer held the job (its lease ran out and another took it, or it was dropped)."""
        counts = {
            k: int(getattr(report, k))
            for k in (
                "passages_total",
                "passages_new",
                "passages_unchanged",
                "passages_replaced",
                "input_tokens",
                "output_tokens",
                "tokens_unknown",
            )
        }
        rec = self._write(
            "job_group_done",
            id=job_id,
            owner=owner,
            done=done,
            documents=documents,
            estimate=estimate,
            report=counts,
            warnings=[str(w) for w in report.warnings],
            max_errors=MAX_ERRORS,
        )
        return str(rec["state"]) if rec else None

    def release(
        self, job_id: str, owner: str, preempted: int = 0, failed: int = 0, delay_s: float = 0.0
    ) -> None:
        """Give a job back unfinished: it yielded (`preempted`), Neo4j failed for now (`failed`,
        claimed again after `delay_s`) or this process is stopping (neither)."""
        self._write(
            "job_release",
            id=job_id,
            owner=owner,
            preempted=preempted,
            failed=failed,
            delay_ms=int(delay_s * 1000),
        )

    def finish(
        self,
        job_id: str,
        owner: str,
        state: str,
        errors: Sequence[str] = (),
        written: int | None = None,
    ) -> None:
        """End the job `state`; `written`: the passages the group in hand wrote, if known (else
        its last heartbeat's count stands)."""
        self._write(
            "job_finish",
            id=job_id,
            owner=owner,
            state=state,
            errors=list(errors),
            max_errors=MAX_ERRORS,
            written=written,
        )

    def sweep(self, retention_s: float) -> int:
        """Finished jobs past `retention_s` become tombstones, old tombstones and abandoned
        submissions go, and finished jobs' documents are deleted; how many documents went."""

        def run() -> None:
            with self.store.session() as s, tracing.statement("job_sweep"):
                for stmt in cypher_statements("job_sweep"):
                    s.run(
                        stmt,
                        retention_s=int(retention_s),
                        tombstone_s=TOMBSTONE_S,
                        receiving_s=RECEIVING_S,
                    ).consume()

        self.ensure_schema()
        self.store.call(run)
        deleted = 0
        for r in self.store.read("job_documents_left"):
            deleted += self.delete_documents(str(r["id"]))
        return deleted

    def delete_documents(self, job_id: str) -> int:
        deleted = 0
        while True:
            rec = self._write("job_delete_documents", job_id=job_id, batch=DELETE_BATCH)
            n = int(rec["deleted"]) if rec else 0
            deleted += n
            if n < DELETE_BATCH:
                break
        self._write("job_documents_gone", job_id=job_id)
        return deleted


def _batches(
    documents: Sequence[Document], estimates: Sequence[int]
) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    chars = 0
    for seq, (d, est) in enumerate(zip(documents, estimates, strict=True)):
        if batch and (len(batch) >= WRITE_ROWS or chars + len(d.text) > WRITE_CHARS):
            yield batch
            batch, chars = [], 0
        batch.append({"seq": seq, "estimate": est, **d.record()})
        chars += len(d.text)
    if batch:
        yield batch


def _document(r: dict[str, Any]) -> Document:
    return Document(
        id=r["id"],
        text=r["text"],
        title=r.get("title") or "",
        source=r.get("source") or "",
        is_passage=bool(r.get("is_passage")),
        title_is_name=bool(r.get("title_is_name", True)),
        pages=tuple(int(p) for p in r.get("pages") or ()),
    )
