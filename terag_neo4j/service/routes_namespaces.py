"""Namespaces: list, create, counts, drop."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from fastapi import APIRouter, Request, Response

from terag_neo4j import namespace_views as views
from terag_neo4j.service.audit import audit_note
from terag_neo4j.service.auth import Caller, ReadNamespace, WriteNamespace, authorize
from terag_neo4j.service.deps import ERRORS, RuntimeDep
from terag_neo4j.service.schemas import Namespace, NamespaceCreate, NamespaceStats

if TYPE_CHECKING:
    from terag_neo4j.store import NamespaceInfo

router = APIRouter(prefix="/v1")


def _namespace(info: NamespaceInfo) -> Namespace:
    d = asdict(info)
    return Namespace(**{k: d[k] for k in Namespace.model_fields if k in d})


@router.get("/namespaces", response_model=list[Namespace], tags=["namespaces"], responses=ERRORS)
async def list_namespaces(rt: RuntimeDep, principal: Caller) -> list[Namespace]:
    """The namespaces this key may read."""
    infos = await rt.call(lambda c: c.namespaces())
    return [_namespace(i) for i in infos if principal.can_read(i.name)]


@router.post(
    "/namespaces",
    response_model=Namespace,
    status_code=201,
    tags=["namespaces"],
    responses={200: {"model": Namespace}, **ERRORS},
)
async def create_namespace(
    request: Request, rt: RuntimeDep, body: NamespaceCreate, principal: Caller, response: Response
) -> Namespace:
    """Create an empty namespace (201), or return it if it exists (200)."""
    audit_note(request, namespace=body.name)
    authorize(principal, body.name, write=True)
    ns = body.name
    existed, info = await rt.call(lambda c: views.ensure_namespace(c, ns))
    if existed:
        response.status_code = 200
    return _namespace(info)


@router.get(
    "/namespaces/{namespace}",
    response_model=NamespaceStats,
    tags=["namespaces"],
    responses=ERRORS,
)
async def namespace_stats(rt: RuntimeDep, namespace: ReadNamespace) -> NamespaceStats:
    """Counts, tokens spent, ingest runs and GDS projections of a namespace."""
    info = await rt.call(lambda c: c.stats(namespace))
    return NamespaceStats(**asdict(info))


@router.delete("/namespaces/{namespace}", status_code=204, tags=["namespaces"], responses=ERRORS)
async def drop_namespace(rt: RuntimeDep, namespace: WriteNamespace) -> Response:
    """Drop a namespace: its GDS projections, then its graph."""
    await rt.call(lambda c: c.drop(namespace))
    return Response(status_code=204)
