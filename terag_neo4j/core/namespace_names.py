"""What a namespace may be called: checked by the store, the service and the CLI alike, so it
lives where the CLI can read it without importing the Neo4j driver."""

from __future__ import annotations

import re

from terag_neo4j.errors import TeragError, echo

NAMESPACE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # always used with fullmatch


class InvalidNamespace(TeragError, ValueError):
    """A namespace name that is not 1-64 letters, digits, '_' or '-'."""


def check_namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not NAMESPACE_RE.fullmatch(namespace):
        raise InvalidNamespace(
            f"invalid namespace {echo(namespace)}: use 1-64 letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return namespace
