"""Parsing the LLM's plain-text answers (one `type: name` per line, `[n]` sections for a batch)
into concepts."""

from __future__ import annotations

import re

from terag_neo4j.core.concepts import Concept, dedupe, make_concept, normalize_type

_BULLET = re.compile(r"^\s*(?:[-*•·]+|\d+[.)]|\(\d+\))\s*")
# A section header: `[n]` (or "Passage n:") alone, or followed by the section's first line.
_SECTION = re.compile(r"^\s*(?:#+\s*)?(?:\[(\d+)\]\s*(.*)|(?:passage|text)\s+(\d+)\s*:?\s*)$", re.I)


def parse_lines(text: str, truncated: bool = False) -> tuple[Concept, ...]:
    """Concepts from a plain-text answer.

    Tolerates bullets, numbering, blank lines, duplicates and stray prose; a line cut off by the
    output cap is dropped rather than indexed half-written.
    """
    lines = text.splitlines()
    if truncated and lines and not text.endswith("\n"):
        lines = lines[:-1]
    out: list[Concept] = []
    for raw in lines:
        line = _BULLET.sub("", raw).strip()
        if not line or ":" not in line:
            continue
        head, _, tail = line.partition(":")
        type_ = normalize_type(head)
        if type_ is None:
            continue  # prose such as "Here are the entities:" or an unknown label
        for name in _split_names(tail):
            c = make_concept(type_, name)
            if c is not None:
                out.append(c)
    return dedupe(out)


def _split_names(tail: str) -> list[str]:
    # Small models sometimes list several names on one line ("other: Hindi, English").
    tail = tail.strip()
    if ";" in tail:
        return [t for t in tail.split(";") if t.strip()]
    parts = [t for t in tail.split(",") if t.strip()]
    if len(parts) > 1 and all(len(p.split()) <= 4 for p in parts) and not _looks_like_date(tail):
        return parts
    return [tail]


def _looks_like_date(s: str) -> bool:
    return bool(re.search(r"\b\d{1,2},\s*\d{3,4}\b", s))


def parse_batch(text: str, n: int, truncated: bool = False) -> list[tuple[Concept, ...] | None]:
    """Split a batched answer into its `[i]` sections; a missing section gives None."""
    sections: dict[int, list[str]] = {}
    current: int | None = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            current = int(m.group(1) or m.group(3))
            sections.setdefault(current, [])
            if m.group(2):
                sections[current].append(m.group(2))
        elif current is not None:
            sections[current].append(line)
    last = max(sections) if sections else None
    result: list[tuple[Concept, ...] | None] = []
    for i in range(1, n + 1):
        if i not in sections:
            result.append(None)
            continue
        body = "\n".join(sections[i])
        result.append(parse_lines(body + ("" if i == last else "\n"), truncated and i == last))
    return result


# A lean answer line: `n: name; name` (also `n.`, `n)`, `[n]`), n the passage's number.
_NUMBERED = re.compile(r"^\s*(?:\[(\d{1,3})\]\s*:?|(\d{1,3})\s*[:.)])\s*(.*)$")
UNTYPED = "other"  # the lean prompt asks for names only, as HippoRAG's recorded NER gives them


def parse_numbered(text: str, n: int, truncated: bool = False) -> list[tuple[Concept, ...] | None]:
    """Names per passage from `n: name; name` lines; a passage with no line gives None.

    A line without a leading number continues the previous passage's line (small models wrap
    long lists); one numbered beyond n, and what follows it, is dropped. When the output cap cut the answer, only the last name,
    which may be half-written, is dropped, not the passage's whole line.
    """
    sections: dict[int, list[str]] = {}
    current: int | None = None
    for line in text.splitlines():
        m = _NUMBERED.match(line)
        number = int(m.group(1) or m.group(2)) if m else 0
        if m and 1 <= number <= n:
            current = number
            sections.setdefault(current, []).append(m.group(3))
        elif m:
            current = None  # a passage the batch does not have: the model is making text up
        elif current is not None and line.strip():
            sections[current].append(line)
    if truncated and not text.endswith("\n") and current is not None:
        body = ";".join(sections[current])
        sections[current] = [body.rpartition(";")[0]]
    result: list[tuple[Concept, ...] | None] = []
    for i in range(1, n + 1):
        if i not in sections:
            result.append(None)
            continue
        names = [name for part in sections[i] for name in _split_names(part)]
        result.append(dedupe(c for name in names if (c := make_concept(UNTYPED, name))))
    return result
