"""The root of every error terag-neo4j raises: `except TeragError` catches them all.

Each error stays where its stage defines it (`InputError` in `documents`, `GraphStoreError` in
`store`, ...) and keeps its older builtin base too (`ValueError` for bad input, settings and
queries, `RuntimeError` for services and set-up), so an existing `except ValueError` still
works. `terag_neo4j` exports them all:

    >>> from terag_neo4j import TeragClient, TeragError
    >>> try:                                                          # doctest: +SKIP
    ...     TeragClient(namespace="docs").retrieve("Who founded Porsche?")
    ... except TeragError as e:   # settings, input, Neo4j, Ollama, retrieval: one line each
    ...     print(e)

This module imports nothing, so that catching an error never loads a stage.
"""

from __future__ import annotations

__all__ = ["DependencyError", "IngestCancelled", "NotFound", "TeragError", "echo", "one_line"]


def one_line(text: object, limit: int = 240) -> str:
    """`text` (an exception's message, a server's reply) as one line of at most `limit`
    characters, for an error message that quotes it."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


ECHO_CHARS = 40


def echo(value: object, limit: int = ECHO_CHARS) -> str:
    """What a caller sent, as an error message may quote it: a short prefix, escaped (`repr`,
    so no line break or control character reaches a log line), with the length when cut. A
    message never quotes a caller's whole argument: a megabyte of it made every error a
    megabyte, and the text it went through on the way out cost time in proportion."""
    if not isinstance(value, str):
        return f"a {type(value).__name__}"
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value):,} characters)"


class TeragError(Exception):
    """Base class of every error raised by terag-neo4j; the message is one line that says what
    to do."""


class DependencyError(TeragError, RuntimeError, ImportError):
    """A package or pipeline that a feature needs is not installed; the message says what to
    install. An `ImportError` (what it is) and a `RuntimeError` (what these errors were)."""


class IngestCancelled(TeragError):
    """An ingest stopped because its `should_stop` said so. Every batch written before it is
    whole (each is one transaction) and extractions are cached: indexing the same documents
    again resumes where it stopped."""


class NotFound(TeragError, LookupError):
    """What a call names is not in the namespace: a document, a passage or a concept (an
    unknown namespace is `NamespaceNotFound`)."""
