"""How namespaces, passages and concepts are named in the graph."""

from __future__ import annotations

import hashlib
import re

from terag_neo4j.errors import TeragError
from terag_neo4j.extraction import Concept

NAMESPACE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # always used with fullmatch


class InvalidNamespace(TeragError, ValueError):
    """A namespace name that is not 1-64 letters, digits, '_' or '-'."""


def check_namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not NAMESPACE_RE.fullmatch(namespace):
        raise InvalidNamespace(
            f"invalid namespace {namespace!r}: use 1-64 letters, digits, '_' or '-', starting with a letter or digit"
        )
    return namespace


def passage_uid(namespace: str, passage_id: str) -> str:
    return f"{namespace}|{passage_id}"


def concept_uid(namespace: str, concept: Concept) -> str:
    return f"{namespace}|{concept.key}"


def namespace_key(namespace: str) -> str:
    """The namespace as one token of the full-text analyzer (`my-docs` would be two), stored on
    its passages as `nskey`: a full-text search is confined to a namespace by `+nskey:<key>`."""
    return "ns" + hashlib.sha1(namespace.encode()).hexdigest()[:16]
