"""Ingest jobs: submit (for the document routes), status, list and cancellation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query, Request, Response

from terag_neo4j.errors import echo
from terag_neo4j.service.audit import audit_note
from terag_neo4j.service.auth import Caller, authenticate
from terag_neo4j.service.deps import ERRORS, JobsDep, RuntimeDep, jobs, runtime
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.schemas import Job

if TYPE_CHECKING:
    from terag_neo4j.core.documents import Document

router = APIRouter(prefix="/v1")


def _check_sizes(docs: list[Document]) -> None:
    from terag_neo4j.core.documents import MAX_DOCUMENT_CHARS

    for d in docs:
        if len(d.text) > MAX_DOCUMENT_CHARS:
            raise ServiceError(
                413,
                f"document {echo(d.id)} has {len(d.text):,} characters, over the "
                f"{MAX_DOCUMENT_CHARS:,} limit; split it",
            )


async def submit(request: Request, namespace: str, docs: list[Document]) -> Job:
    """Store the documents as a job (in Neo4j: any process of the service may run it)."""
    audit_note(request, documents=[d.id for d in docs])
    _check_sizes(docs)
    principal = authenticate(request.app.state.keys, request.headers)
    reg = jobs(request)
    return await runtime(request).call(lambda c: reg.submit(c, namespace, docs, principal))


@router.get("/jobs/{job_id}", response_model=Job, tags=["jobs"], responses=ERRORS)
async def job_status(rt: RuntimeDep, reg: JobsDep, job_id: str, principal: Caller) -> Job:
    """An ingest job's state, passages done of total, errors and tokens; 404 for a job of a
    namespace this key cannot read, as for an unknown one."""
    return await rt.call(lambda c: reg.get(c, job_id, principal))


@router.get("/jobs", response_model=list[Job], tags=["jobs"], responses=ERRORS)
async def list_jobs(
    rt: RuntimeDep,
    reg: JobsDep,
    principal: Caller,
    limit: Annotated[int, Query(ge=1, le=1000)] = 1000,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> list[Job]:
    """Recent ingest jobs of the namespaces this key may read: the `limit` newest after the
    `offset` newest, oldest first (the next page: `offset` + `limit`; an empty page: none
    older)."""
    return await rt.call(lambda c: reg.recent(c, principal, limit, offset))


@router.delete("/jobs/{job_id}", response_model=Job, tags=["jobs"], responses=ERRORS)
async def cancel_job(
    request: Request, rt: RuntimeDep, reg: JobsDep, job_id: str, principal: Caller
) -> Response:
    """Cancel a job: a queued one at once, a running one within about a second (what it wrote
    stays, and adding the same documents again resumes)."""
    job = await rt.call(lambda c: reg.cancel(c, job_id, principal))
    audit_note(request, namespace=job.namespace)
    return Response(job.model_dump_json(), 202, media_type="application/json")
