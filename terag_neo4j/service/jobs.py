"""Ingest jobs: documents indexed in the background, one job at a time, with a status to poll.

A job splits its documents into passages first (so its status can say passages done of total),
then indexes them in groups of documents; cancelling stops it before the next group. What a
group wrote stays written and is consistent (the indexer writes a document's passages in one
transaction per batch, under the namespace's write lock), and re-adding the same documents
later skips what is already there, as `terag index` does after an interruption.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from terag_neo4j.service.errors import ServiceError, public_message, status_for
from terag_neo4j.service.schemas import Job, JobState

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.indexing.documents import Document

log = logging.getLogger(__name__)

# Passages per indexing call: large enough that batching pays, small enough that progress and
# cancellation are seen within seconds
GROUP_PASSAGES = 64
KEEP_FINISHED = 1000


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class IngestJob:
    id: str
    namespace: str
    documents: list[Document]
    state: JobState = "queued"
    documents_total: int = 0
    documents_done: int = 0
    passages_total: int = 0
    passages_done: int = 0
    passages_new: int = 0
    passages_unchanged: int = 0
    passages_replaced: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    created: str = field(default_factory=_now)
    finished: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)

    def view(self) -> Job:
        return Job(
            id=self.id,
            namespace=self.namespace,
            state=self.state,
            documents_total=self.documents_total,
            documents_done=self.documents_done,
            passages_total=self.passages_total,
            passages_done=self.passages_done,
            passages_new=self.passages_new,
            passages_unchanged=self.passages_unchanged,
            passages_replaced=self.passages_replaced,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            errors=list(self.errors),
            created=self.created,
            finished=self.finished,
        )


class JobRegistry:
    """Jobs by id; one worker thread runs them in order (ingest is CPU-heavy, and writes to one
    namespace are serialised by its lock anyway), so queries keep the other threads."""

    def __init__(self, max_queued: int) -> None:
        self.max_queued = max_queued
        self._jobs: OrderedDict[str, IngestJob] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="terag-ingest")

    def submit(self, client: TeragClient, namespace: str, documents: list[Document]) -> IngestJob:
        with self._lock:
            queued = sum(1 for j in self._jobs.values() if j.state == "queued")
            if queued >= self.max_queued:
                raise ServiceError(
                    429,
                    f"{queued} ingest jobs already queued; retry later",
                    headers={"Retry-After": "10"},
                )
            job = IngestJob(
                uuid.uuid4().hex[:16], namespace, documents, documents_total=len(documents)
            )
            self._jobs[job.id] = job
            self._forget_old()
        self._pool.submit(self._run, client, job)
        return job

    def _forget_old(self) -> None:
        done = [k for k, j in self._jobs.items() if j.finished is not None]
        for k in done[: max(0, len(done) - KEEP_FINISHED)]:
            del self._jobs[k]

    def get(self, job_id: str) -> IngestJob:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise ServiceError(404, f"no ingest job {job_id!r} (finished jobs are kept a while)")
        return job

    def jobs(self, namespaces: set[str] | None = None) -> list[IngestJob]:
        with self._lock:
            jobs = list(self._jobs.values())
        return [j for j in jobs if namespaces is None or j.namespace in namespaces]

    def cancel(self, job: IngestJob) -> None:
        job.cancel.set()
        if job.state == "queued":
            self._finish(job, "cancelled")

    def _finish(self, job: IngestJob, state: JobState) -> None:
        job.state = state
        job.finished = _now()
        job.documents = []  # the texts are written or abandoned: free them

    def _run(self, client: TeragClient, job: IngestJob) -> None:
        if job.cancel.is_set():
            return
        job.state = "running"
        try:
            groups = self._plan(client, job)
            for docs, passages in groups:
                if job.cancel.is_set():
                    self._finish(job, "cancelled")
                    return
                report = client.index(docs, namespace=job.namespace, progress=False)
                job.documents_done += len(docs)
                job.passages_done += passages
                job.passages_new += report.passages_new
                job.passages_unchanged += report.passages_unchanged
                job.passages_replaced += report.passages_replaced
                job.input_tokens += report.input_tokens
                job.output_tokens += report.output_tokens
                job.errors.extend(report.warnings)
            self._finish(job, "succeeded")
        except Exception as e:
            status, type_ = status_for(e)
            if status >= 500:
                log.exception("ingest job %s failed", job.id)
            job.errors.append(f"{type_}: {public_message(e)}")
            self._finish(job, "failed")

    @staticmethod
    def _plan(client: TeragClient, job: IngestJob) -> list[tuple[list[Document], int]]:
        """Documents in groups of about GROUP_PASSAGES passages, counted as the indexer will."""
        from terag_neo4j.indexing.documents import default_tokenizer, split_document

        s = client.settings
        tok = default_tokenizer(s.embedding_model)
        groups: list[tuple[list[Document], int]] = []
        docs: list[Document] = []
        n = 0
        for d in job.documents:
            k = (
                len(split_document(d, s.chunk_tokens, s.chunk_overlap, tok))
                if d.text.strip()
                else 0
            )
            job.passages_total += k
            docs.append(d)
            n += k
            if n >= GROUP_PASSAGES:
                groups.append((docs, n))
                docs, n = [], 0
        if docs:
            groups.append((docs, n))
        return groups

    def close(self) -> None:
        for job in self.jobs():
            job.cancel.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
