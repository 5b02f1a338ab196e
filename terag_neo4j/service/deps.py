"""What a route gets through FastAPI's dependencies: the runtime (the shared client and its
admission), the job registry, the parse pool and the key ring, all set on the app at start; and
the error responses the routes document."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from terag_neo4j.service.bodies import BodyGate
from terag_neo4j.service.jobs import JobRegistry
from terag_neo4j.service.parsing import ParsePool
from terag_neo4j.service.runtime import Runtime
from terag_neo4j.service.schemas import ErrorBody
from terag_neo4j.service.settings import KeyRing

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 403, 404, 422, 429, 503)
}
JOB_ERRORS = {**ERRORS, 413: ERRORS[422], 415: ERRORS[422]}


def runtime(request: Request) -> Runtime:
    rt: Runtime = request.app.state.runtime
    return rt


def jobs(request: Request) -> JobRegistry:
    reg: JobRegistry = request.app.state.jobs
    return reg


def parsing(request: Request) -> ParsePool:
    pool: ParsePool = request.app.state.parsing
    return pool


def bodies(request: Request) -> BodyGate:
    gate: BodyGate = request.app.state.bodies
    return gate


def keys(request: Request) -> KeyRing:
    ring: KeyRing = request.app.state.keys
    return ring


RuntimeDep = Annotated[Runtime, Depends(runtime)]
JobsDep = Annotated[JobRegistry, Depends(jobs)]
ParsingDep = Annotated[ParsePool, Depends(parsing)]
KeysDep = Annotated[KeyRing, Depends(keys)]
BodiesDep = Annotated[BodyGate, Depends(bodies)]
