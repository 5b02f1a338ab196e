"""The structured extraction prompt (`json`): the v2 prompt's instructions and examples, answered
as JSON that the server is asked to hold to (Ollama's `format`, an OpenAI-compatible server's
`response_format`), and its parser. The parser reads a reply that is not whole JSON leniently:
a reply cut by the output cap keeps its complete `{"type", "name"}` objects, and a server that
ignored the format (a LangChain chat model, a server that refused `response_format`) may have
answered `type: name` lines, which the plain-text parser reads."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from terag_neo4j.core.concepts import TYPES, Concept, dedupe, make_concept, normalize_type
from terag_neo4j.indexing.extraction.reply_parser import parse_lines

JSON_PROMPT_VERSION = "terag-ner-json-v1"

# Bounds what a constrained decoder may emit: a small model that repeats itself stops at the
# cap instead of filling the output budget with one list
MAX_CONCEPTS = 40

_CONCEPT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": list(TYPES)},
        "name": {"type": "string"},
    },
    "required": ["type", "name"],
}
PASSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "concepts": {"type": "array", "items": _CONCEPT_SCHEMA, "maxItems": MAX_CONCEPTS}
    },
    "required": ["concepts"],
}
BATCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"texts": {"type": "array", "items": PASSAGE_SCHEMA}},
    "required": ["texts"],
}

# One complete concept object, wherever it stands in a reply that is not whole JSON; the
# name is a JSON string (escapes allowed), its length bounded so no input makes this scan slow
_OBJECT = re.compile(
    r'\{\s*"type"\s*:\s*"([^"\\]{1,40})"\s*,\s*"name"\s*:\s*"((?:[^"\\]|\\.){1,400})"\s*\}'
)


def as_json(answer: str) -> str:
    """A v2 example answer (`type: name` lines) as the JSON the prompt asks for."""
    pairs = [line.split(": ", 1) for line in answer.splitlines()]
    return json.dumps({"concepts": [{"type": t, "name": n} for t, n in pairs]})


def _concepts(items: Any) -> tuple[Concept, ...] | None:
    if not isinstance(items, list):
        return None
    out: list[Concept] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind, name = item.get("type"), item.get("name")
        if not isinstance(kind, str) or not isinstance(name, str):
            continue
        type_ = normalize_type(kind)
        c = make_concept(type_, name) if type_ is not None else None
        if c is not None:
            out.append(c)
    return dedupe(out)


def _lenient(text: str, truncated: bool) -> tuple[Concept, ...]:
    """Concepts from a reply that is not whole JSON: its complete objects, else its lines."""
    found = [
        c
        for kind, raw in _OBJECT.findall(text)
        if (t := normalize_type(kind)) is not None
        and (c := make_concept(t, _unescape(raw))) is not None
    ]
    return dedupe(found) if found else parse_lines(text, truncated)


def _unescape(raw: str) -> str:
    try:
        value = json.loads(f'"{raw}"')
    except json.JSONDecodeError:
        return raw
    return value if isinstance(value, str) else raw


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def parse_json(text: str, n: int, truncated: bool = False) -> list[tuple[Concept, ...] | None]:
    """Concepts per passage from a JSON reply (`{"concepts": [...]}` for one passage,
    `{"texts": [{"concepts": [...]}, ...]}` for a batch); read leniently where it is not."""
    data = _load(text)
    if n == 1:
        if isinstance(data, dict):
            whole = _concepts(data.get("concepts"))
            if whole is not None:
                return [whole]
        return [_lenient(text, truncated)]
    texts = data.get("texts") if isinstance(data, dict) else None
    if not isinstance(texts, list):
        # A batch's sections cannot be told apart in a broken reply: every passage is missing
        return [None] * n
    out: list[tuple[Concept, ...] | None] = []
    for i in range(n):
        entry = texts[i] if i < len(texts) else None
        out.append(_concepts(entry.get("concepts")) if isinstance(entry, dict) else None)
    return out


def is_whole_json(text: str) -> bool:
    """Whether the reply parsed as JSON (a parse failure is counted where it did not)."""
    return _load(text) is not None


def schema_for(passages: Sequence[object]) -> dict[str, Any]:
    return PASSAGE_SCHEMA if len(passages) == 1 else BATCH_SCHEMA
