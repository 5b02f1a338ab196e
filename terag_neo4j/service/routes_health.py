"""Health, readiness and version."""

from __future__ import annotations

import asyncio
import re

from fastapi import APIRouter, Request, Response

from terag_neo4j.service.auth import presented_key
from terag_neo4j.service.deps import KeysDep, RuntimeDep
from terag_neo4j.service.schemas import Health, Readiness, Version

router = APIRouter(prefix="/v1")


@router.get("/health", response_model=Health, tags=["health"])
async def health() -> Health:
    """Liveness: the process answers (it may still be loading; see /v1/ready)."""
    return Health()


@router.get(
    "/ready", response_model=Readiness, tags=["health"], responses={503: {"model": Readiness}}
)
async def ready(request: Request, rt: RuntimeDep, keys: KeysDep) -> Response:
    """Readiness: models loaded and Neo4j + GDS answering now; 503 until then. Why not, and the
    GDS version, only for a caller with a key (or any caller of a service without keys)."""
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
