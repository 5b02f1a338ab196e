"""The console: the static page at `/` and its files under `/console/` (`console_files`). The
files need no key (they hold no data; every call the page makes to /v1 carries the key the user
signs in with). Also the two small reads the page needs: what the caller's key reaches, and what
a namespace's overview shows beyond its counts.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from terag_neo4j import namespace_views as views
from terag_neo4j.core.results import Overview
from terag_neo4j.service.auth import Caller, ReadNamespace
from terag_neo4j.service.console_files import CONSOLE_PREFIX, file_response
from terag_neo4j.service.deps import ERRORS, RuntimeDep
from terag_neo4j.service.schemas import KeyScope

router = APIRouter()
api = APIRouter(prefix="/v1")


@router.get("/", include_in_schema=False)
async def console_page() -> Response:
    return file_response("index.html")


@router.get(CONSOLE_PREFIX + "{name:path}", include_in_schema=False)
async def consolefile_response(name: str) -> Response:
    return file_response(name)


@api.get("/key", response_model=KeyScope, tags=["namespaces"], responses=ERRORS)
async def key_scope(principal: Caller) -> KeyScope:
    """What the presented key reaches: its namespaces (null: every one) and whether it may
    write them. The console shows only these, and write controls only to a write key."""
    namespaces = None if principal.namespaces is None else sorted(principal.namespaces)
    return KeyScope(namespaces=namespaces, write=principal.write)


@api.get(
    "/namespaces/{namespace}/overview",
    response_model=Overview,
    tags=["namespaces"],
    responses=ERRORS,
)
async def overview(
    rt: RuntimeDep,
    namespace: ReadNamespace,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> Overview:
    """What the namespace's counts (GET /v1/namespaces/{namespace}) leave out: its most
    connected concepts (by the passages they occur in, then the concepts they co-occur with),
    the embedding model its vectors are from, and whether an ingest is writing it now."""

    return await rt.call(lambda c: views.overview(c, namespace, limit))
