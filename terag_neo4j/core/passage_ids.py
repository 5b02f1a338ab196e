"""Passage ids: how a document's id and a passage's place in it name the passage.

A document split into several passages names them `<document>#<position>`; a document that is
one passage (a benchmark record, a short file) names it `<document>`. In the document part '%'
and '#' are percent-encoded (`%25`, `%23`), so a passage id holds at most one '#', the one before
its position, and two different (document, position) pairs never share an id: with the document
id spliced in raw, a document `x#1` took over passage 1 of the document `x`. An id without '%' or
'#' reads as it always did, so a benchmark record's passage id is still its dataset id.

Namespaces record the scheme their ids follow (`SCHEME`, the Namespace node's `passage_ids`);
one written before it is renamed by its first write (`store.migrations`).
"""

from __future__ import annotations

SCHEME = 2  # 1 (or none recorded): the document id spliced in unescaped


def escape(doc_id: str) -> str:
    return doc_id.replace("%", "%25").replace("#", "%23")


def passage_id(doc_id: str, position: int | None = None) -> str:
    """The id of passage `position` of a document split into several; None: its only passage."""
    base = escape(doc_id)
    return base if position is None else f"{base}#{position}"


def renamed(old_id: str, doc_id: str, position: int | None) -> str | None:
    """The id a passage named by the first scheme has now; None when it keeps its id (its
    document's id holds no '%' or '#') or is not an id that scheme made."""
    if escape(doc_id) == doc_id:
        return None
    if old_id == doc_id:
        return passage_id(doc_id)
    if position is not None and old_id == f"{doc_id}#{position}":
        return passage_id(doc_id, position)
    return None
