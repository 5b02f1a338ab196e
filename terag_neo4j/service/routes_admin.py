"""Health, readiness, version and namespaces."""

from __future__ import annotations

import asyncio
import re
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request, Response

from terag_neo4j.service.audit import audit_note
from terag_neo4j.service.auth import (
    Caller,
    ReadNamespace,
    WriteNamespace,
    authorize,
    presented_key,
)
from terag_neo4j.service.schemas import (
    ErrorBody,
    Health,
    Namespace,
    NamespaceCreate,
    NamespaceStats,
    Readiness,
    Version,
)

if TYPE_CHECKING:
    from terag_neo4j.service.runtime import Runtime
    from terag_neo4j.service.settings import KeyRing

router = APIRouter(prefix="/v1")
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 403, 404, 422, 429, 503)
}


def runtime(request: Request) -> Runtime:
    rt: Runtime = request.app.state.runtime
    return rt


@router.get("/health", response_model=Health, tags=["health"])
async def health() -> Health:
    """Liveness: the process answers (it may still be loading; see /v1/ready)."""
    return Health()


@router.get(
    "/ready", response_model=Readiness, tags=["health"], responses={503: {"model": Readiness}}
)
async def ready(request: Request) -> Response:
    """Readiness: models loaded and Neo4j + GDS answering now; 503 until then. Why not, and the
    GDS version, only for a caller with a key (or any caller of a service without keys)."""
    rt = runtime(request)
    keys: KeyRing = request.app.state.keys
    detailed = not len(keys) or keys.lookup(presented_key(request.headers)) is not None

    def not_ready(models: bool, why: str) -> Response:
        body = Readiness(
            ready=False, neo4j=False, models=models, detail=_redacted(why) if detailed else None
        )
        return Response(body.model_dump_json(), 503, {"Retry-After": "5"}, "application/json")

    if not rt.warm:
        return not_ready(False, rt.startup_error or "loading")
    loop = asyncio.get_running_loop()
    try:
        probe = await asyncio.wait_for(loop.run_in_executor(None, rt.probe), 5.0)
    except Exception as e:  # unreachable, or too slow to count as ready
        return not_ready(True, str(e) or "timeout")
    body = Readiness(ready=True, neo4j=True, gds=probe["gds"] if detailed else None, models=True)
    return Response(body.model_dump_json(), 200, media_type="application/json")


# A URI's user:password@, should a setting carry one
_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")


def _redacted(text: str) -> str:
    return _USERINFO.sub("***@", text)


@router.get("/version", response_model=Version, tags=["health"])
async def version() -> Version:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        v = dist_version("terag-neo4j")
    except PackageNotFoundError:
        v = "unknown"
    return Version(version=v)


def _namespace(info: Any) -> dict[str, Any]:
    d = asdict(info)
    return {k: d[k] for k in Namespace.model_fields if k in d}


@router.get("/namespaces", response_model=list[Namespace], tags=["namespaces"], responses=ERRORS)
async def list_namespaces(request: Request, principal: Caller) -> list[Namespace]:
    """The namespaces this key may read."""
    infos = await runtime(request).call(lambda c: c.namespaces())
    return [Namespace(**_namespace(i)) for i in infos if principal.can_read(i.name)]


@router.post(
    "/namespaces",
    response_model=Namespace,
    status_code=201,
    tags=["namespaces"],
    responses={200: {"model": Namespace}, **ERRORS},
)
async def create_namespace(
    request: Request, body: NamespaceCreate, principal: Caller, response: Response
) -> Namespace:
    """Create an empty namespace (201), or return it if it exists (200)."""
    audit_note(request, namespace=body.name)
    authorize(principal, body.name, write=True)
    ns = body.name

    def work(c: Any) -> tuple[bool, Any]:
        existed = c.store.namespace_exists(ns)
        if not existed:
            c.store.bump_version(ns)  # creates it under its write lock
        return existed, c.stats(ns)

    existed, info = await runtime(request).call(work)
    if existed:
        response.status_code = 200
    return Namespace(**_namespace(info))


@router.get(
    "/namespaces/{namespace}",
    response_model=NamespaceStats,
    tags=["namespaces"],
    responses=ERRORS,
)
async def namespace_stats(request: Request, namespace: ReadNamespace) -> NamespaceStats:
    """Counts, tokens spent, ingest runs and GDS projections of a namespace."""
    info = await runtime(request).call(lambda c: c.stats(namespace))
    return NamespaceStats(**asdict(info))


@router.delete("/namespaces/{namespace}", status_code=204, tags=["namespaces"], responses=ERRORS)
async def drop_namespace(request: Request, namespace: WriteNamespace) -> Response:
    """Drop a namespace: its GDS projections, then its graph."""
    await runtime(request).call(lambda c: c.drop(namespace))
    return Response(status_code=204)
