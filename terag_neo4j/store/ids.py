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


def projection_name_re(namespace: str, code: str | None = None) -> re.Pattern[str]:
    """Full-match pattern of the GDS graph names of one namespace (see `graph_name`).

    Namespaces may contain '_', so `wiki`'s pattern must not match `terag_wiki_en_utn_v3`: the
    walk code (orientation d/u, the flags c, s, t, n in that order, a hub cap h<n>; default any)
    has no '_', and only `_v<n>[_<epoch>]` may follow it.
    """
    pattern = re.escape(code) if code else r"[du]c?s?t?n?(?:h\d+)?"
    return re.compile(
        rf"terag_{re.escape(namespace)}_(?P<walk>{pattern})_v(?P<version>\d+)(?:_[0-9a-f]{{8}})?"
    )
