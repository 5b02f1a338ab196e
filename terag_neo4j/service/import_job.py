"""A namespace archive's import run as a job by the ingest worker (`job_worker`).

An import is all or nothing (indexing/namespace_import.py): it is not cut into groups and never
yields to another tenant midway, since a stopped import starts over. Its progress is the
passages written, recorded by the lease's heartbeat as a group's is. A cancel or a shutdown
stops it at its next batch and drops what it wrote; a process killed meanwhile leaves the
namespace marked with the job's id, and the worker that claims the job after the lease ran out
drops that leftover and imports again from the spooled archive.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import TYPE_CHECKING, Any, Protocol

from terag_neo4j.errors import IngestCancelled, TeragError
from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.service.archives import host, spool_dir
from terag_neo4j.store import Neo4jTransientError, Neo4jUnavailable

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.service.job_store import JobStore
    from terag_neo4j.service.stored_job import StoredJob

log = logging.getLogger(__name__)


class Runner(Protocol):
    """What of the ingest worker (`job_worker.Worker`) an import job uses: named here, not
    imported, since the worker imports this module to run one."""

    owner: str

    def flags(self) -> Any: ...
    def beat(self, jobs: JobStore, job_id: str, flags: Any, done: threading.Event) -> None: ...
    def stopping(self) -> bool: ...
    def stopped(self, jobs: JobStore, job: StoredJob, why: str) -> None: ...
    def fail(self, jobs: JobStore, job: StoredJob, e: Exception) -> None: ...
    def retry(self, jobs: JobStore, job: StoredJob, e: TeragError) -> None: ...


HANDOFF_S = 5.0  # an archive in another host's spool: the job waits this long for that host


def run_import(worker: Runner, client: TeragClient, jobs: JobStore, job: StoredJob) -> None:
    path = spool_dir(client.settings.home) / job.archive
    if not job.archive or not path.is_file():
        if job.spool_host and job.spool_host != host():
            # Another machine's spool holds it: give the job back for that machine's workers
            jobs.release(job.id, worker.owner, delay_s=HANDOFF_S)
            return
        jobs.finish(
            job.id, worker.owner, "failed", ["ArchiveError: its archive is gone; send it again"]
        )
        return
    flags = worker.flags()
    beating = threading.Event()
    beat = threading.Thread(
        target=worker.beat, args=(jobs, job.id, flags, beating), name="terag-import-lease"
    )
    beat.start()
    total = int(job.row.get("estimate_total") or 0)
    why: list[str] = []

    def progress(what: str, n: int) -> None:
        if what == "passages":
            flags.group = {"done": n, "total": total, "estimate": total, "document": None}
        if worker.stopping():
            why.append("shutdown")
        elif flags.cancel:
            why.append("cancel")
        elif not flags.mine:
            why.append("lost")
        if why:
            raise IngestCancelled(f"import stopped: {why[0]}")

    try:
        report = client.import_namespace(path, job.namespace, token=job.id, progress=progress)
    except IngestCancelled:
        worker.stopped(jobs, job, why[0] if why else "cancel")
        if why[:1] == ["cancel"]:
            path.unlink(missing_ok=True)
        return
    except (Neo4jUnavailable, Neo4jTransientError) as e:
        worker.retry(jobs, job, e)
        return
    except Exception as e:
        worker.fail(jobs, job, e)
        path.unlink(missing_ok=True)
        return
    finally:
        beating.set()
        beat.join()
    counts = IngestReport(
        run_id=job.id,
        namespace=job.namespace,
        extractor="",
        model="",
        passages_total=report.passages,
        passages_new=report.passages,
    )
    state = jobs.group_done(job.id, worker.owner, 0, job.documents_total, total, counts)
    if state is None:
        log.info("import job %s: no longer held by this worker; its namespace is written", job.id)
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
    log.info("import job %s: %d passages into %r", job.id, report.passages, job.namespace)
