"""Who is calling, and may they touch this namespace: FastAPI dependencies over the key ring.

A key comes as `Authorization: Bearer KEY` or `X-API-Key: KEY`. A key scoped to other
namespaces gets 403 for a namespace it does not hold, whether that namespace exists or not, so
a caller cannot learn another tenant's namespace names by probing.

The front door (`middleware.FrontDoor`) makes the same checks from the path and headers before a
request's body is read; these dependencies make them again where the routes use the namespace.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Annotated

from fastapi import Depends, Path, Request

from terag_neo4j.errors import echo
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.schemas import NAMESPACE_PATTERN
from terag_neo4j.service.settings import OPEN, KeyRing, Principal

# Who the request being served is (set by the front door), for per-key admission
CALLER: ContextVar[Principal | None] = ContextVar("terag_caller", default=None)


def presented_key(headers: Mapping[str, str]) -> str | None:
    auth = headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    key = headers.get("x-api-key", "").strip()
    return key or None


def authenticate(keys: KeyRing, headers: Mapping[str, str]) -> Principal:
    """The caller's principal; 401 without a valid key (when keys are configured)."""
    if not len(keys):
        return OPEN
    principal = keys.lookup(presented_key(headers))
    if principal is None:
        raise ServiceError(
            401,
            "missing or unknown API key: send Authorization: Bearer KEY or X-API-Key: KEY",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return principal


def authorize(principal: Principal, namespace: str, write: bool) -> None:
    if not principal.can_read(namespace):
        raise ServiceError(403, f"this key has no access to namespace {echo(namespace)}")
    if write and not principal.can_write(namespace):
        raise ServiceError(403, f"this key may only read namespace {echo(namespace)}")


async def caller(request: Request) -> Principal:
    keys: KeyRing = request.app.state.keys
    return authenticate(keys, request.headers)


Caller = Annotated[Principal, Depends(caller)]
NamespacePath = Annotated[
    str, Path(pattern=NAMESPACE_PATTERN, description="the namespace", examples=["wiki"])
]


def _scoped(write: bool) -> Callable[[str, Principal], Awaitable[str]]:
    async def dep(namespace: NamespacePath, principal: Caller) -> str:
        authorize(principal, namespace, write)
        return namespace

    return dep


# A route's namespace, checked against the caller's key for reading or for writing
ReadNamespace = Annotated[str, Depends(_scoped(False))]
WriteNamespace = Annotated[str, Depends(_scoped(True))]
