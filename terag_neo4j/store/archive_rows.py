"""The rows of a namespace archive (store/archive_format.py): vectors as base64, property
values as JSON keeps them, and the shape each member's rows must have (checked before an import
writes anything).
"""

from __future__ import annotations

import base64
import re
import sys
from array import array
from collections.abc import Callable
from typing import Any

from terag_neo4j.errors import TeragError

MAX_DIMENSIONS = 16_384
# A property a row may carry: a lower-case identifier; the store's own keys are never taken.
PROPERTY_RE = re.compile(r"[a-z_][a-z0-9_]{0,63}")
RESERVED = frozenset({"uid", "namespace", "embedding", "ft_title", "ft_text", "since"})
# Namespace-record properties an import never takes from an archive: the target's own identity,
# lock, version and counts, its search layout, and the states an import sets itself.
NAMESPACE_RESERVED = frozenset(
    {
        "name",
        "lock",
        "epoch",
        "created",
        "updated",
        "version",
        "passages",
        "concepts",
        "dropping",
        "importing",
        "search",
        "cooccurrence",
    }
)


class ArchiveError(TeragError, ValueError):
    """An archive that cannot be imported: corrupt, truncated, tampered, hostile, of a newer
    format, or of another embedding model than the target's. Nothing was written."""


def encode_vector(values: list[float]) -> str:
    """A vector as base64 of little-endian float32 (`f4:`), or float64 (`f8:`) where float32
    would change a value: an import writes back exactly the numbers it read."""
    as32 = array("f", values)
    exact = as32.tolist() == values
    arr = as32 if exact else array("d", values)
    if sys.byteorder != "little":
        arr.byteswap()
    return ("f4:" if exact else "f8:") + base64.b64encode(arr.tobytes()).decode("ascii")


def decode_vector(text: object) -> list[float]:
    if not isinstance(text, str) or text[:3] not in ("f4:", "f8:"):
        raise ArchiveError("a vector is not 'f4:' or 'f8:' base64")
    arr = array("f" if text[:3] == "f4:" else "d")
    try:
        raw = base64.b64decode(text[3:], validate=True)
        arr.frombytes(raw)
    except ValueError as e:
        raise ArchiveError(f"a vector is not valid base64 of its type ({e})") from e
    if not 0 < len(arr) <= MAX_DIMENSIONS:
        raise ArchiveError(f"a vector has {len(arr)} values (1 to {MAX_DIMENSIONS} allowed)")
    if sys.byteorder != "little":
        arr.byteswap()
    return arr.tolist()


def jsonable(value: Any) -> Any:
    """A property value as JSON keeps it: temporal values (a run's start) as ISO text."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "iso_format"):
        return str(value.iso_format())
    return str(value)


# ---------------------------------------------------------------- rows and their shapes


def _props(value: object, what: str, reserved: frozenset[str] = RESERVED) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ArchiveError(f"{what}: properties are not an object")
    for k, v in value.items():
        if not PROPERTY_RE.fullmatch(k) or k in reserved:
            raise ArchiveError(f"{what}: property name {k[:70]!r} is not allowed")
        items = v if isinstance(v, list) else [v]
        if not all(isinstance(x, (str, int, float, bool)) for x in items):
            raise ArchiveError(f"{what}: property {k!r} is not a scalar or a list of scalars")
    return value


def _text(value: object, what: str, limit: int = 4096) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= limit:
        raise ArchiveError(f"{what} is not a string of 1 to {limit} characters")
    return value


def _check_passage(row: dict[str, Any], dims: int) -> None:
    props = _props(row.get("props"), "a passage")
    _text(props.get("id"), "a passage's id")
    _text(props.get("hash"), "a passage's hash")
    if len(decode_vector(row.get("embedding"))) != dims:
        raise ArchiveError(f"a passage's vector is not {dims}-dimensional as the manifest says")


def _check_concept(row: dict[str, Any], dims: int) -> None:
    props = _props(row.get("props"), "a concept")
    _text(props.get("key"), "a concept's key")
    if not isinstance(props.get("frequency"), int):
        raise ArchiveError("a concept's frequency is not a number")
    if row.get("embedding") is not None and len(decode_vector(row["embedding"])) != dims:
        raise ArchiveError(f"a concept's vector is not {dims}-dimensional as the manifest says")


def _check_link(row: dict[str, Any], _dims: int) -> None:
    _text(row.get("concept"), "a HAS_PASSAGE link's concept")
    _text(row.get("passage"), "a HAS_PASSAGE link's passage")
    if not isinstance(row.get("mention", False), bool):
        raise ArchiveError("a HAS_PASSAGE link's mention flag is not true or false")


def _check_pair(row: dict[str, Any], _dims: int) -> None:
    _text(row.get("a"), "a pair's first concept")
    _text(row.get("b"), "a pair's second concept")
    if row["a"] == row["b"]:
        raise ArchiveError("a pair links a concept to itself")
    value = row.get("count", row.get("similarity"))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArchiveError("a pair's count or similarity is not a number")


def _check_document(row: dict[str, Any], _dims: int) -> None:
    _text(row.get("id"), "a document's id")
    if not isinstance(row.get("passages"), int):
        raise ArchiveError("a document's passage count is not a number")


def _check_namespace(row: dict[str, Any], _dims: int) -> None:
    _props(row.get("props"), "the namespace record", NAMESPACE_RESERVED)


def _check_run(row: dict[str, Any], _dims: int) -> None:
    props = _props(row.get("props"), "an ingest run", frozenset({"namespace"}))
    _text(props.get("run_id"), "an ingest run's id", 200)


CHECKS: dict[str, Callable[[dict[str, Any], int], None]] = {
    "namespace.jsonl": _check_namespace,
    "documents.jsonl": _check_document,
    "passages.jsonl": _check_passage,
    "concepts.jsonl": _check_concept,
    "has_passage.jsonl": _check_link,
    "co_occurrence.jsonl": _check_pair,
    "synonym.jsonl": _check_pair,
    "runs.jsonl": _check_run,
}
