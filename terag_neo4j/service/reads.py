"""A read route's work, run so that a key that may not write the namespace writes nothing.

A retrieval builds a few things on first use when they are missing (a namespace's own search
indexes after an upgrade, CO_OCCURRENCE pairs kept lazily, concept vectors kept lazily). For a
caller who may write the namespace the service keeps that behaviour; for a read-only key the work
runs inside `store.reads_only()`, where Neo4j refuses every write, and the read is refused with
the one line saying what a writer must run. Nothing else a read does writes (GDS projections live
in GDS memory; the record of a projection's last use is skipped).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from terag_neo4j.service.auth import CALLER

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.service.settings import Principal

T = TypeVar("T")


def as_reader(
    namespace: str, fn: Callable[[TeragClient], T], principal: Principal | None = None
) -> Callable[[TeragClient], T]:
    """`fn` as a read of `namespace` by `principal` (default: this request's caller, set by
    the front door; unknown: read only)."""
    who = principal if principal is not None else CALLER.get()
    if who is not None and who.can_write(namespace):
        return fn

    def read(c: Any) -> T:
        with c.store.reads_only():
            return fn(c)

    return read
