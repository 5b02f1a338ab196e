"""Documents and ingest jobs: add texts (JSON) or files (multipart), list, delete; job status
and cancellation."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, File, Query, Request, Response, UploadFile

from terag_neo4j.service import graph
from terag_neo4j.service.audit import audit_note
from terag_neo4j.service.auth import Caller, ReadNamespace, WriteNamespace, authenticate
from terag_neo4j.service.errors import ServiceError
from terag_neo4j.service.routes_admin import ERRORS, runtime
from terag_neo4j.service.schemas import Deleted, DocumentList, Job, TextsRequest

if TYPE_CHECKING:
    from terag_neo4j.core.documents import Document
    from terag_neo4j.service.jobs import JobRegistry

router = APIRouter(prefix="/v1")
JOB_ERRORS = {**ERRORS, 413: ERRORS[422], 415: ERRORS[422]}


def jobs(request: Request) -> JobRegistry:
    reg: JobRegistry = request.app.state.jobs
    return reg


def _check_sizes(docs: list[Document]) -> None:
    from terag_neo4j.core.documents import MAX_DOCUMENT_CHARS

    for d in docs:
        if len(d.text) > MAX_DOCUMENT_CHARS:
            raise ServiceError(
                413,
                f"document {d.id!r} has {len(d.text):,} characters, over the "
                f"{MAX_DOCUMENT_CHARS:,} limit; split it",
            )


async def _submit(request: Request, namespace: str, docs: list[Document]) -> Job:
    """Store the documents as a job (in Neo4j: any process of the service may run it)."""
    audit_note(request, documents=[d.id for d in docs])
    _check_sizes(docs)
    principal = authenticate(request.app.state.keys, request.headers)
    reg = jobs(request)
    return await runtime(request).call(lambda c: reg.submit(c, namespace, docs, principal))


@router.post(
    "/namespaces/{namespace}/documents",
    response_model=Job,
    status_code=202,
    tags=["documents"],
    responses=JOB_ERRORS,
)
async def add_texts(request: Request, namespace: WriteNamespace, body: TextsRequest) -> Job:
    """Index texts in the background; poll the returned job. The same id with the same text
    again changes nothing; with another text it replaces the document."""
    from terag_neo4j.core.documents import Document

    ids = [d.id for d in body.documents]
    if len(set(ids)) != len(ids):
        raise ServiceError(422, "documents: every id must be unique within a request")
    docs = [
        Document(
            id=d.id,
            text=d.text,
            title=d.title,
            source=d.source,
            is_passage=d.is_passage,
            title_is_name=d.title_is_name,
            pages=tuple(d.pages),
        )
        for d in body.documents
    ]
    return await _submit(request, namespace, docs)


@router.post(
    "/namespaces/{namespace}/documents/upload",
    response_model=Job,
    status_code=202,
    tags=["documents"],
    responses=JOB_ERRORS,
)
async def upload(
    request: Request,
    namespace: WriteNamespace,
    files: Annotated[
        list[UploadFile], File(description=".pdf, .docx, .html, .md, .txt or .jsonl files")
    ],
) -> Job:
    """Index uploaded files (as `terag index` reads them, by their content: a PDF, .docx, HTML
    page or text file is one document with the file name as its id, a .jsonl file one document
    per line). Each file is read in a worker process, within a time limit; 413 when a file is
    beyond a limit (its size inflated, its pages, the time), 415 when it cannot be read."""
    from terag_neo4j.service.parsing import ParsePool, save_upload, upload_names

    names = upload_names([f.filename for f in files])
    pool: ParsePool = request.app.state.parsing
    docs: list[Document] = []
    with tempfile.TemporaryDirectory(prefix="terag-upload-") as tmp:
        for f, name in zip(files, names, strict=True):
            path = Path(tmp) / name
            await asyncio.to_thread(save_upload, f.file, path)
            docs += await pool.read(path, name)
    seen: set[str] = set()
    for d in docs:
        if d.id in seen:
            raise ServiceError(422, f"documents: id {d.id!r} twice in the uploaded files")
        seen.add(d.id)
    if not docs:
        raise ServiceError(422, "no documents in the uploaded files")
    return await _submit(request, namespace, docs)


@router.get(
    "/namespaces/{namespace}/documents",
    response_model=DocumentList,
    tags=["documents"],
    responses=ERRORS,
)
async def list_documents(
    request: Request,
    namespace: ReadNamespace,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> DocumentList:
    """The namespace's documents, with their passage counts, by id."""
    docs, total = await runtime(request).call(
        lambda c: graph.documents(c, namespace, offset, limit)
    )
    return DocumentList(namespace=namespace, documents=docs, total=total)


@router.delete(
    "/namespaces/{namespace}/documents/{document_id:path}",
    response_model=Deleted,
    tags=["documents"],
    responses=ERRORS,
)
async def delete_document(request: Request, namespace: WriteNamespace, document_id: str) -> Deleted:
    """Remove a document and its passages; 404 if the namespace has no such document."""

    def work(c: Any) -> int:
        c.store.require_namespace(namespace)
        if not c.store.documents_present(namespace, [document_id]):
            raise ServiceError(404, f"no document {document_id!r} in namespace {namespace!r}")
        return int(c.store.delete_document(namespace, document_id))

    n = await runtime(request).call(work)
    return Deleted(namespace=namespace, document=document_id, passages=n)


@router.get("/jobs/{job_id}", response_model=Job, tags=["jobs"], responses=ERRORS)
async def job_status(request: Request, job_id: str, principal: Caller) -> Job:
    """An ingest job's state, passages done of total, errors and tokens; 404 for a job of a
    namespace this key cannot read, as for an unknown one."""
    reg = jobs(request)
    return await runtime(request).call(lambda c: reg.get(c, job_id, principal))


@router.get("/jobs", response_model=list[Job], tags=["jobs"], responses=ERRORS)
async def list_jobs(request: Request, principal: Caller) -> list[Job]:
    """Recent ingest jobs (up to 1000, oldest first) of the namespaces this key may read."""
    reg = jobs(request)
    return await runtime(request).call(lambda c: reg.recent(c, principal))


@router.delete("/jobs/{job_id}", response_model=Job, tags=["jobs"], responses=ERRORS)
async def cancel_job(request: Request, job_id: str, principal: Caller) -> Response:
    """Cancel a job: a queued one at once, a running one within about a second (what it wrote
    stays, and adding the same documents again resumes)."""
    reg = jobs(request)
    job = await runtime(request).call(lambda c: reg.cancel(c, job_id, principal))
    audit_note(request, namespace=job.namespace)
    return Response(job.model_dump_json(), 202, media_type="application/json")
