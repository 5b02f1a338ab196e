"""A namespace's archive: export it (streamed) and import one (a durable job); see archives.py."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Iterator

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from terag_neo4j.service.archives import check_room, new_job_id, receive, spool_dir
from terag_neo4j.service.audit import audit_note
from terag_neo4j.service.auth import CALLER, Caller, ReadNamespace, WriteNamespace
from terag_neo4j.service.deps import ERRORS, JOB_ERRORS, BodiesDep, JobsDep, RuntimeDep
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.policy import ZIP
from terag_neo4j.service.schemas import Job

router = APIRouter(prefix="/v1")
ZIP_BODY = {"content": {ZIP: {"schema": {"type": "string", "format": "binary"}}}}


def _close(chunks: Iterator[bytes]) -> None:
    # A client gone mid-stream leaves the generator running in its thread: closing it then
    # fails, and it closes (with its session) once that step ends and it is collected
    with contextlib.suppress(ValueError):
        chunks.close()  # type: ignore[attr-defined]


@router.get(
    "/namespaces/{namespace}/export",
    response_class=StreamingResponse,
    tags=["namespaces"],
    responses={200: ZIP_BODY, **ERRORS},
)
async def export_namespace(request: Request, rt: RuntimeDep, namespace: ReadNamespace) -> object:
    """The namespace as an archive (a zip: docs/operations.md, "Namespace archives"), streamed
    as it is read, so memory stays flat whatever its size. 429 while this process streams as
    many exports as it allows."""
    client = rt.client
    who = CALLER.get()
    stack = contextlib.ExitStack()
    stack.enter_context(request.app.state.exports.held(who.name if who else ""))
    chunks = client.export_chunks(namespace)
    stack.callback(_close, chunks)
    try:  # a missing namespace is a 404 before the first byte
        first = await asyncio.to_thread(next, chunks, None)
    except BaseException:
        stack.close()
        raise

    async def body() -> AsyncIterator[bytes]:
        with stack:
            chunk = first
            while chunk is not None:
                if chunk:
                    yield chunk
                chunk = await asyncio.to_thread(next, chunks, None)

    stream = body()
    # A client gone before the first byte leaves `body` never started, so its `with` never
    # runs: the slot and the session are given back when the generator is collected
    weakref.finalize(stream, stack.close)
    disposition = f'attachment; filename="{namespace}.zip"'
    return StreamingResponse(stream, media_type=ZIP, headers={"Content-Disposition": disposition})


@router.post(
    "/namespaces/{namespace}/import",
    response_model=Job,
    status_code=202,
    tags=["namespaces"],
    responses=JOB_ERRORS,
    openapi_extra={"requestBody": {"required": True, **ZIP_BODY}},
)
async def import_namespace(
    request: Request,
    rt: RuntimeDep,
    reg: JobsDep,
    gate: BodiesDep,
    namespace: WriteNamespace,
    principal: Caller,
) -> Job:
    """Import an archive (the body, `Content-Type: application/zip`, up to
    TERAG_MAX_ARCHIVE_BYTES) into a new or empty namespace, as a job; poll it. The archive is
    verified whole before the job exists: corrupt, truncated, tampered, newer, hostile and
    other-model archives are a 422 that leaves the namespace untouched."""
    audit_note(request, namespace=namespace)
    client = rt.client
    spool = spool_dir(client.settings.home)
    length = request.headers.get("content-length")
    await asyncio.to_thread(check_room, spool, int(length) if length and length.isdigit() else 0)
    job_id = new_job_id()
    part = spool / f"{job_id}.zip.part"
    limit = int(request.app.state.service.max_archive_bytes)

    async def spooled() -> None:
        await receive(request, part, limit)

    try:
        return await gate.admission.run_after(
            spooled, lambda _: reg.submit_import(client, namespace, job_id, part, principal),
            principal.name,
        )  # fmt: skip
    except ServiceError as e:
        if e.status in (429, 503):  # refused unread: spare the loop the rest of the body
            e.headers = {**(e.headers or {}), "Connection": "close"}
        raise
    finally:
        part.unlink(missing_ok=True)
