"""The ingest worker of one service process: claims the next job from the shared store, indexes
one group of its documents, records it, gives the job back, and claims again.

Running one group per claim is what makes the queue fair: the claim picks the namespace served
longest ago, so a big job yields to another tenant's small one after each group. A group that
runs long while another tenant waits (one huge document) is stopped through the indexer's
`should_stop` and resumed later: what it wrote stays, and the indexer skips it next time. The
same `should_stop` ends a group when the job is cancelled, when this worker lost its lease (it
stalled and another took the job over) and when the service shuts down.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from terag_neo4j import tracing
from terag_neo4j.errors import IngestCancelled, TeragError
from terag_neo4j.service.http_errors import public_message, status_for
from terag_neo4j.service.job_store import JobStore
from terag_neo4j.service.metrics import record_ingest
from terag_neo4j.service.stored_job import StoredJob
from terag_neo4j.store import Neo4jTransientError, Neo4jUnavailable

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.core.documents import IndexProgress
    from terag_neo4j.service.runtime import Runtime

log = logging.getLogger(__name__)

# Estimated passages per group: big enough that an index call's fixed cost is small, small
# enough that a group is written in seconds (progress, fairness and resumption are per group).
GROUP_PASSAGES = 64
GROUP_DOCUMENTS = 1000
IDLE_POLL_S = 1.0  # how often an idle worker looks for work (a submission here wakes it)
# A job waiting this long with no worker taking it means every worker is busy: the running
# group then yields, after it has run its slice.
WAITING_S = 3 * IDLE_POLL_S
SLICE_S = 5.0  # a group's time before it yields to a waiting tenant; doubles per yield in a row
SLICE_MAX_S = 40.0
RETRIES = 5  # Neo4j failing for now: the job is tried again this often before it fails
SWEEP_S = 60.0


@dataclass
class _Flags:
    mine: bool = True
    cancel: bool = False
    others: bool = False
    # The group's progress as the indexer last told it; the lease's heartbeat records it, so
    # a long document's progress costs no write of its own and never waits for one.
    group: dict[str, Any] | None = None


def sweep_spool(client: TeragClient, jobs: JobStore) -> None:
    """Archives of imports that ended, or whose submission never finished, leave the spool."""
    from terag_neo4j.service.archives import spool_dir, sweep

    def unfinished(job_id: str) -> bool:
        job = jobs.get(job_id)
        return job is not None and job.row.get("state") in ("receiving", "queued", "running")

    try:
        sweep(spool_dir(client.settings.home), unfinished)
    except OSError as e:
        log.warning("could not sweep the import spool: %s", e)


class Worker:
    """One thread; `wake` after a local submission, `close` at shutdown (the group in hand
    stops at its next check and the job goes back to the queue at once)."""

    def __init__(
        self, runtime: Runtime, lease_s: float, retention_s: float, queue: str = "default"
    ) -> None:
        self.runtime = runtime
        self.queue = queue
        self.lease_s = lease_s
        self.retention_s = retention_s
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._store: JobStore | None = None
        self._swept = 0.0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="terag-ingest", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def close(self, timeout: float = 5.0) -> None:
        """Stop taking jobs; a running ingest stops at its next batch (what it did not finish
        resumes under its lease in the next worker), waited for up to `timeout`."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    # ------------------------------------------------------------------ the loop

    def _loop(self) -> None:
        while not self._stop.is_set() and not self.runtime.warm:
            self._stop.wait(0.5)
        while not self._stop.is_set():
            try:
                client = self.runtime.client
                jobs = self._jobs(client)
                if time.monotonic() - self._swept > SWEEP_S:
                    self._swept = time.monotonic()
                    jobs.sweep(self.retention_s)
                    sweep_spool(client, jobs)
                job = jobs.claim(self.owner, self.lease_s)
            except TeragError as e:  # Neo4j down: the jobs wait in the store meanwhile
                log.warning("ingest worker: %s (retrying in 5 s)", e)
                self._stop.wait(5.0)
                continue
            except Exception:
                log.exception("ingest worker: unexpected error (retrying in 5 s)")
                self._stop.wait(5.0)
                continue
            if job is None:
                self._wake.wait(IDLE_POLL_S)
                self._wake.clear()
                continue
            try:
                with tracing.job_span(job.id, job.kind, {"terag.namespace": job.namespace}):
                    self._group(client, jobs, job)
            except TeragError as e:  # recording failed: the lease runs out, another resumes
                log.warning("ingest job %s: %s", job.id, e)
                self._stop.wait(1.0)
            except Exception:
                log.exception("ingest job %s: unexpected error", job.id)
                self._stop.wait(1.0)

    def _jobs(self, client: TeragClient) -> JobStore:
        if self._store is None or self._store.store is not client.store:
            self._store = JobStore(client.store, self.queue)
        return self._store

    # ------------------------------------------------------------------ one group

    def flags(self) -> _Flags:
        return _Flags()

    def stopping(self) -> bool:
        return self._stop.is_set()

    def _group(self, client: TeragClient, jobs: JobStore, job: StoredJob) -> None:
        if job.kind == "import":
            from terag_neo4j.service.import_job import run_import

            run_import(self, client, jobs, job)
            return
        start = job.documents_done
        docs, estimate = jobs.next_group(job.id, start, GROUP_PASSAGES, GROUP_DOCUMENTS)
        if not docs:  # every document recorded (a crash between the last group and its end)
            log.warning("ingest job %s: no documents left at %d; ending it", job.id, start)
            jobs.finish(job.id, self.owner, "failed", ["InternalError: its documents are gone"])
            return
        flags = _Flags()
        beating = threading.Event()
        beat = threading.Thread(
            target=self.beat, args=(jobs, job.id, flags, beating), name="terag-ingest-lease"
        )
        beat.start()
        began = time.monotonic()
        budget = min(SLICE_S * 2**job.preempted, SLICE_MAX_S)
        why: list[str] = []

        def should_stop() -> bool:
            if self._stop.is_set():
                why.append("shutdown")
            elif flags.cancel:
                why.append("cancel")
            elif not flags.mine:
                why.append("lost")
            elif flags.others and time.monotonic() - began >= budget:
                why.append("yield")
            return bool(why)

        def on_progress(p: IndexProgress) -> None:
            flags.group = {
                "done": p.done, "total": p.total, "estimate": estimate, "document": p.document,
            }  # fmt: skip

        try:
            report = client.index(
                docs,
                namespace=job.namespace,
                progress=False,
                should_stop=should_stop,
                on_progress=on_progress,
            )
        except IngestCancelled:
            group = flags.group or {}
            self.stopped(jobs, job, why[0] if why else "cancel", written=group.get("done"))
            return
        except (Neo4jUnavailable, Neo4jTransientError) as e:
            self.retry(jobs, job, e)
            return
        except Exception as e:
            self.fail(jobs, job, e)
            return
        finally:
            beating.set()
            beat.join()
        state = jobs.group_done(job.id, self.owner, start, len(docs), estimate, report)
        record_ingest(report)  # written, whether or not this worker still holds the job
        if state is None:
            log.info("ingest job %s: no longer held by this worker; its group is written", job.id)
        elif state != "running":
            jobs.delete_documents(job.id)
            log.info("ingest job %s %s", job.id, state)

    def stopped(self, jobs: JobStore, job: StoredJob, why: str, written: int | None = None) -> None:
        """`written`: the passages the stopped group wrote (they stay, and count as done)."""
        if why == "cancel":
            jobs.finish(job.id, self.owner, "cancelled", written=written)
            jobs.delete_documents(job.id)
            log.info("ingest job %s cancelled", job.id)
        elif why == "yield":
            jobs.release(job.id, self.owner, preempted=1)
            log.info("ingest job %s yields to another namespace's job", job.id)
        elif why == "shutdown":
            jobs.release(job.id, self.owner)
        # "lost": another worker holds it now; nothing of ours to record

    def fail(self, jobs: JobStore, job: StoredJob, e: Exception) -> None:
        """End `job` failed with `e`'s public message; a server-side error is logged whole."""
        status, type_ = status_for(e)
        if status >= 500:
            log.exception("%s job %s failed", job.kind, job.id)
        jobs.finish(job.id, self.owner, "failed", [f"{type_}: {public_message(e)}"])

    def retry(self, jobs: JobStore, job: StoredJob, e: TeragError) -> None:
        if job.attempts + 1 >= RETRIES:
            jobs.finish(job.id, self.owner, "failed", [f"{status_for(e)[1]}: {public_message(e)}"])
            return
        log.warning("ingest job %s: %s (trying again)", job.id, e)
        # Still down: the lease runs out and the job is claimed again anyway
        with contextlib.suppress(TeragError):
            jobs.release(job.id, self.owner, failed=1, delay_s=5.0 * (job.attempts + 1))

    def beat(self, jobs: JobStore, job_id: str, flags: _Flags, done: threading.Event) -> None:
        """Renew the lease and read the flags, about every second and at least three times a
        lease; a beat that fails is tried again (the lease is renewed well before it ends)."""
        every = min(1.0, self.lease_s / 3)
        while not done.wait(every):
            try:
                b = jobs.heartbeat(job_id, self.owner, self.lease_s, WAITING_S, flags.group)
            except TeragError as e:
                log.debug("ingest job %s: heartbeat failed: %s", job_id, e)
                continue
            flags.mine, flags.cancel, flags.others = b.mine, b.cancel, b.others
