"""Documents: add texts (JSON) or files (multipart), list, delete."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, File, Query, Request, UploadFile
from fastapi import Path as PathParam

from terag_neo4j import namespace_views as views
from terag_neo4j.core.results import DocumentPage
from terag_neo4j.errors import echo
from terag_neo4j.service.auth import ReadNamespace, WriteNamespace
from terag_neo4j.service.deps import ERRORS, JOB_ERRORS, BodiesDep, ParsingDep, RuntimeDep
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.routes_jobs import submit
from terag_neo4j.service.schemas import MAX_DOCUMENTS, MAX_ID_CHARS, Deleted, Job, texts_body_schema

if TYPE_CHECKING:
    from terag_neo4j.core.documents import Document

router = APIRouter(prefix="/v1")


@router.post(
    "/namespaces/{namespace}/documents",
    response_model=Job,
    status_code=202,
    tags=["documents"],
    responses=JOB_ERRORS,
    # The body is read by the route (bodies.py), so FastAPI is told its schema here
    openapi_extra={"requestBody": texts_body_schema()},
)
async def add_texts(request: Request, namespace: WriteNamespace, gate: BodiesDep) -> Job:
    """Index texts in the background; poll the returned job. The same id with the same text
    again changes nothing; with another text it replaces the document."""
    docs = await gate.texts(request)
    ids = [d.id for d in docs]
    if len(set(ids)) != len(ids):
        raise ServiceError(422, "documents: every id must be unique within a request")
    return await submit(request, namespace, docs)


@router.post(
    "/namespaces/{namespace}/documents/upload",
    response_model=Job,
    status_code=202,
    tags=["documents"],
    responses=JOB_ERRORS,
)
async def upload(
    request: Request,
    pool: ParsingDep,
    namespace: WriteNamespace,
    files: Annotated[
        list[UploadFile], File(description=".pdf, .docx, .html, .md, .txt or .jsonl files")
    ],
) -> Job:
    """Index uploaded files (as `terag index` reads them, by their content: a PDF, .docx, HTML
    page or text file is one document with the file name as its id, a .jsonl file one document
    per line). Each file is read in a worker process, within a time limit; 413 when a file is
    beyond a limit (its size inflated, its pages, the time), 415 when it cannot be read."""
    from terag_neo4j.service.parsing import save_upload, upload_names

    names = upload_names([f.filename for f in files])
    docs: list[Document] = []
    with tempfile.TemporaryDirectory(prefix="terag-upload-") as tmp:
        for f, name in zip(files, names, strict=True):
            path = Path(tmp) / name
            await asyncio.to_thread(save_upload, f.file, path)
            # Each file may add what is left of the upload's cap (the JSON route's)
            docs += await pool.read(path, name, MAX_DOCUMENTS - len(docs))
    seen: set[str] = set()
    for d in docs:
        if d.id in seen:
            raise ServiceError(422, f"documents: id {echo(d.id)} twice in the uploaded files")
        seen.add(d.id)
    if not docs:
        raise ServiceError(422, "no documents in the uploaded files")
    return await submit(request, namespace, docs)


@router.get(
    "/namespaces/{namespace}/documents",
    response_model=DocumentPage,
    tags=["documents"],
    responses=ERRORS,
)
async def list_documents(
    rt: RuntimeDep,
    namespace: ReadNamespace,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> DocumentPage:
    """The namespace's documents, with their passage counts, by id."""
    return await rt.call(lambda c: c.documents(namespace, offset, limit))


@router.delete(
    "/namespaces/{namespace}/documents/{document_id:path}",
    response_model=Deleted,
    tags=["documents"],
    responses=ERRORS,
)
async def delete_document(
    rt: RuntimeDep,
    namespace: WriteNamespace,
    document_id: Annotated[str, PathParam(max_length=MAX_ID_CHARS)],
) -> Deleted:
    """Remove a document and its passages; 404 if the namespace has no such document."""
    n = await rt.call(lambda c: views.delete_document(c, namespace, document_id))
    return Deleted(namespace=namespace, document=document_id, passages=n)
