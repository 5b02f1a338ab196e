"""Ingest jobs: documents indexed in the background, with a status to poll.

Jobs live in Neo4j (`job_store`), so a restarted service, or any other process of the service
on the same database, answers for them and runs them; each process runs one worker
(`job_worker`) that takes the queue one group of documents at a time, fairly across
namespaces. What a group wrote stays written and is consistent (the indexer writes a document's
passages in one transaction per batch, under the namespace's write lock), and re-adding the same
documents skips what is already there, which is how a job taken over after a crash resumes.

Every lookup checks the caller's key before saying anything about the job: a job of a
namespace the key cannot read is answered as an unknown one.
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING

from terag_neo4j.errors import echo
from terag_neo4j.service.archives import archive_name, check_archive, host
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.job_store import JobLimit, JobStore
from terag_neo4j.service.job_worker import Worker
from terag_neo4j.service.schemas import MAX_DOCUMENTS, MAX_ID_CHARS, MAX_TITLE_CHARS, Job
from terag_neo4j.service.stored_job import StoredJob

if TYPE_CHECKING:
    from pathlib import Path

    from terag_neo4j.client import TeragClient
    from terag_neo4j.core.documents import Document
    from terag_neo4j.service.runtime import Runtime
    from terag_neo4j.service.settings import Principal, ServiceSettings

log = logging.getLogger(__name__)

JOB_ID = re.compile(r"[0-9a-f]{16}")


def check_submission(documents: list[Document]) -> None:
    """The bounds of the JSON route, for every way documents come in (uploads, MCP): a 413 or
    422 with one line, before anything is stored."""
    if len(documents) > MAX_DOCUMENTS:
        raise ServiceError(
            413,
            f"{len(documents):,} documents, over the {MAX_DOCUMENTS:,} one submission may hold; "
            "split it",
        )
    for d in documents:
        if len(d.id) > MAX_ID_CHARS or len(d.title) > MAX_TITLE_CHARS:
            what = "id" if len(d.id) > MAX_ID_CHARS else "title"
            limit = MAX_ID_CHARS if what == "id" else MAX_TITLE_CHARS
            shown = ascii(d.id[:40]) + ("..." if len(d.id) > 40 else "")
            raise ServiceError(
                422, f"document {shown}: its {what} is over the {limit:,}-character limit"
            )


class JobRegistry:
    """The routes' and MCP tools' view of the job store, and this process's worker."""

    def __init__(self, runtime: Runtime, service: ServiceSettings) -> None:
        self.max_queued = service.max_jobs_queued
        self.per_minute = service.max_jobs_per_minute
        self.retention_h = service.job_retention_hours
        self.queue = service.job_queue
        self.worker = Worker(
            runtime, service.job_lease_s, service.job_retention_hours * 3600, self.queue
        )
        self._store: JobStore | None = None

    def start(self) -> None:
        self.worker.start()

    def close(self) -> None:
        self.worker.close()

    def _jobs(self, client: TeragClient) -> JobStore:
        if self._store is None or self._store.store is not client.store:
            self._store = JobStore(client.store, self.queue)
        return self._store

    def submit(
        self, client: TeragClient, namespace: str, documents: list[Document], principal: Principal
    ) -> Job:
        """Store the documents and queue the job; 429 when this key already has
        `max_jobs_queued` unfinished jobs (one tenant cannot fill the queue for the others)."""
        check_submission(documents)
        jobs = self._jobs(client)
        try:
            job = jobs.submit(
                namespace,
                documents,
                principal.name,
                client.settings.chunk_tokens,
                self.max_queued,
                self.per_minute,
            )
        except JobLimit as e:
            raise self._limited(e) from None
        self.worker.wake()
        return job.view()

    def _limited(self, e: JobLimit) -> ServiceError:
        if e.unfinished >= self.max_queued:
            message = (
                f"this key already has {e.unfinished} unfinished ingest jobs "
                f"(TERAG_MAX_JOBS_QUEUED); retry when one ends"
            )
        else:
            message = (
                f"this key submitted {e.recent} ingest jobs in the last minute "
                f"(TERAG_MAX_JOBS_PER_MINUTE); retry within a minute"
            )
        return ServiceError(429, message, headers={"Retry-After": "10"})

    def submit_import(
        self, client: TeragClient, namespace: str, job_id: str, part: Path, principal: Principal
    ) -> Job:
        """Verify the archive received at `part` (ArchiveError, 422: nothing is queued and
        `part` is removed), then queue its import as job `job_id`, counted against the key's
        job limits as an ingest is."""
        final = part.with_name(archive_name(job_id))
        try:
            manifest = check_archive(client.store, part, namespace)
            os.replace(part, final)
            job = self._jobs(client).submit_import(
                job_id,
                namespace,
                final.name,
                host(),
                principal.name,
                dict(manifest["counts"]),
                self.max_queued,
                self.per_minute,
            )
        except JobLimit as e:
            final.unlink(missing_ok=True)
            raise self._limited(e) from None
        except BaseException:
            part.unlink(missing_ok=True)
            final.unlink(missing_ok=True)
            raise
        self.worker.wake()
        return job.view()

    def _readable(
        self, client: TeragClient, job_id: str, principal: Principal
    ) -> tuple[JobStore, StoredJob]:
        """The job, if this key may read its namespace; otherwise 404 as for an unknown id
        (neither its namespace nor that it exists is told)."""
        jobs = self._jobs(client)
        found = jobs.get(job_id) if JOB_ID.fullmatch(job_id) else None
        if found is None or not principal.can_read(found.namespace):
            raise ServiceError(
                404,
                f"no ingest job {echo(job_id)}: check the id (finished jobs are kept "
                f"{self.retention_h:g} h)",
            )
        if found.expired:
            raise ServiceError(
                404,
                f"ingest job {echo(job_id)} finished more than {self.retention_h:g} h ago and was "
                "removed (TERAG_JOB_RETENTION_HOURS sets how long finished jobs are kept)",
            )
        return jobs, found

    def get(self, client: TeragClient, job_id: str, principal: Principal) -> Job:
        return self._readable(client, job_id, principal)[1].view()

    def recent(
        self, client: TeragClient, principal: Principal, limit: int = 1000, offset: int = 0
    ) -> list[Job]:
        """The `limit` newest jobs after the `offset` newest, of the namespaces this key may
        read, oldest first."""
        ns = None if principal.namespaces is None else sorted(principal.namespaces)
        return [j.view() for j in self._jobs(client).recent(ns, limit, offset)]

    def cancel(self, client: TeragClient, job_id: str, principal: Principal) -> Job:
        """A queued job (or one between groups) ends 'cancelled' at once; a running one is asked
        to stop, and its worker stops within about a second."""
        jobs, found = self._readable(client, job_id, principal)
        if not principal.can_write(found.namespace):
            raise ServiceError(403, "this key may only read: cancelling a job needs a write key")
        jobs.cancel(job_id)
        after = jobs.get(job_id)
        return (after or found).view()
