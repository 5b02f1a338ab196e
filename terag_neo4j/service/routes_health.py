"""Health, readiness and version."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request, Response

from terag_neo4j.errors import TeragError
from terag_neo4j.service.auth import presented_key
from terag_neo4j.service.deps import KeysDep, RuntimeDep
from terag_neo4j.service.http_errors import public_message, without_addresses
from terag_neo4j.service.schemas import Health, Readiness, Version

if TYPE_CHECKING:
    from terag_neo4j.service.runtime import Runtime

router = APIRouter(prefix="/v1")


@router.get("/health", response_model=Health, tags=["health"])
async def health() -> Health:
    """Liveness: the process answers (it may still be loading; see /v1/ready)."""
    return Health()


# A probe answers every caller for this long: /v1/ready needs no key, and a probe per call let
# anyone turn requests into Neo4j reads
PROBE_TTL_S = 1.0
PROBE_TIMEOUT_S = 5.0


class ReadyProbe:
    """The last Neo4j probe's outcome, kept `PROBE_TTL_S`; callers that come while one runs
    wait for that one (one probe at a time, whatever the number of callers)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._at = -PROBE_TTL_S
        self._result: dict[str, Any] | BaseException | None = None
        self._running: asyncio.Future[None] | None = None

    async def result(self) -> dict[str, Any]:
        """The probe's answer, or its exception raised."""
        loop = asyncio.get_running_loop()
        if self._result is None or loop.time() - self._at >= PROBE_TTL_S:
            if self._running is None or self._running.done():
                self._running = asyncio.ensure_future(self._probe())
            await asyncio.shield(self._running)
        if isinstance(self._result, BaseException):
            raise self._result
        assert self._result is not None
        return self._result

    async def _probe(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            got: dict[str, Any] = await asyncio.wait_for(
                loop.run_in_executor(None, self.runtime.probe), PROBE_TIMEOUT_S
            )
            self._result = got
        except Exception as e:  # unreachable, or too slow to count as ready
            self._result = e
        self._at = loop.time()


def _probe_of(request: Request, rt: Runtime) -> ReadyProbe:
    probe: ReadyProbe | None = getattr(request.app.state, "ready_probe", None)
    if probe is None or probe.runtime is not rt:
        probe = request.app.state.ready_probe = ReadyProbe(rt)
    return probe


@router.get(
    "/ready", response_model=Readiness, tags=["health"], responses={503: {"model": Readiness}}
)
async def ready(request: Request, rt: RuntimeDep, keys: KeysDep) -> Response:
    """Readiness: models loaded and Neo4j + GDS answering (probed at most once a second); 503
    until then. Why not, and the GDS version, only for a caller with a key (or any caller of a
    service without keys); no internal address in either."""
    detailed = not len(keys) or keys.lookup(presented_key(request.headers)) is not None

    def not_ready(models: bool, why: str) -> Response:
        body = Readiness(
            ready=False,
            neo4j=False,
            models=models,
            detail=without_addresses(why) if detailed else None,
        )
        return Response(body.model_dump_json(), 503, {"Retry-After": "5"}, "application/json")

    if not rt.warm:
        return not_ready(False, rt.startup_error or "loading")
    try:
        probe = await _probe_of(request, rt).result()
    except TimeoutError:
        return not_ready(True, f"Neo4j did not answer within {PROBE_TIMEOUT_S:g} s")
    except Exception as e:
        return not_ready(True, public_message(e) if isinstance(e, TeragError) else type(e).__name__)
    body = Readiness(ready=True, neo4j=True, gds=probe["gds"] if detailed else None, models=True)
    return Response(body.model_dump_json(), 200, media_type="application/json")


@router.get("/version", response_model=Version, tags=["health"])
async def version() -> Version:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        v = dist_version("terag-neo4j")
    except PackageNotFoundError:
        v = "unknown"
    return Version(version=v)
