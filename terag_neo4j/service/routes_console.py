"""The console: the static page at `/` and its files under `/console/`, served from the package
with a Content-Security-Policy that lets the page load nothing but its own files and call
nothing but this service. The files need no key (they hold no data; every call the page makes
to /v1 carries the key the user signs in with). Also the two small reads the page needs: what
the caller's key reaches, and what a namespace's overview shows beyond its counts.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from terag_neo4j.service.auth import Caller, ReadNamespace
from terag_neo4j.service.errors import ServiceError
from terag_neo4j.service.routes_admin import ERRORS, runtime
from terag_neo4j.service.schemas import KeyScope, NamespaceOverview, TopConcept

PACKAGE = "terag_neo4j.service"
FOLDER = "console"
CONSOLE_PREFIX = "/console/"
# Everything from this origin only, no inline script or style, no plugins, not framed, no
# forms posted anywhere: a page that holds a key in session storage runs nothing it did not ship
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}

router = APIRouter()
api = APIRouter(prefix="/v1")


@cache
def shipped() -> dict[str, bytes]:
    """The console's files by their path under /console/, read once from the package: a request
    can name only one of these, never a path on disk."""
    out: dict[str, bytes] = {}

    def walk(node: Any, prefix: str) -> None:
        for child in node.iterdir():
            name = prefix + child.name
            if child.is_dir():
                walk(child, name + "/")
            elif "." + child.name.rpartition(".")[2] in TYPES:
                out[name] = child.read_bytes()

    walk(resources.files(PACKAGE).joinpath(FOLDER), "")
    return out


def _file(name: str) -> Response:
    body = shipped().get(name)
    if body is None:
        raise ServiceError(404, f"no console file {name!r}")
    return Response(
        body,
        media_type=TYPES["." + name.rpartition(".")[2]],
        headers={
            "Content-Security-Policy": CSP,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY",
            # Revalidated on each load: a new version of the service serves its own page
            "Cache-Control": "no-cache",
        },
    )


@router.get("/", include_in_schema=False)
async def console_page() -> Response:
    return _file("index.html")


@router.get(CONSOLE_PREFIX + "{name:path}", include_in_schema=False)
async def console_file(name: str) -> Response:
    return _file(name)


@api.get("/key", response_model=KeyScope, tags=["namespaces"], responses=ERRORS)
async def key_scope(principal: Caller) -> KeyScope:
    """What the presented key reaches: its namespaces (null: every one) and whether it may
    write them. The console shows only these, and write controls only to a write key."""
    namespaces = None if principal.namespaces is None else sorted(principal.namespaces)
    return KeyScope(namespaces=namespaces, write=principal.write)


@api.get(
    "/namespaces/{namespace}/overview",
    response_model=NamespaceOverview,
    tags=["namespaces"],
    responses=ERRORS,
)
async def overview(
    request: Request,
    namespace: ReadNamespace,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> NamespaceOverview:
    """What the namespace's counts (GET /v1/namespaces/{namespace}) leave out: its most
    connected concepts (by the passages they occur in, then the concepts they co-occur with),
    the embedding model its vectors are from, and whether an ingest is writing it now."""

    def work(c: Any) -> NamespaceOverview:
        c.store.require_namespace(namespace)
        top = c.store.read("top_concepts", namespace=namespace, limit=limit)
        state = c.store.read("namespace_version", namespace=namespace)
        row = state[0] if state else {}
        return NamespaceOverview(
            namespace=namespace,
            top_concepts=[TopConcept.model_validate(r) for r in top],
            embedding_model=row.get("embedding_model"),
            embedding_dimensions=row.get("embedding_dimensions"),
            ingesting=bool(row.get("ingesting")),
        )

    result: NamespaceOverview = await runtime(request).call(work)
    return result
