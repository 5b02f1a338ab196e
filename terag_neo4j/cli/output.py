"""What the commands print: JSON of any result (`--json`), or text with a citation line per passage."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any


def to_jsonable(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        # Field by field (not asdict, which would turn nested results into plain dicts first), and
        # the derived values a result declares in `json_properties` (RetrievalResult.score_kind)
        out = {f.name: to_jsonable(getattr(obj, f.name)) for f in fields(obj)}
        for name in getattr(obj, "json_properties", ()):
            out[name] = to_jsonable(getattr(obj, name))
        return out
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, Path):
        return str(obj)
    return obj


def emit(args: argparse.Namespace, obj: Any, text: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(to_jsonable(obj), indent=2, default=str))
    else:
        print(text)


def format_retrieval(res: Any) -> str:
    lines = [f"query: {res.query}", f"entities: {', '.join(res.entities) or '(none)'}"]
    mode = f"mode: {res.mode}, scores: {res.score_kind}"
    lines.append(f"{mode} (fallback: {res.fallback_reason})" if res.fallback_reason else mode)
    for m in res.matches:
        lines.append(
            f"  match {m.entity!r} -> {m.name} [{m.type}] {m.match} s={m.similarity:.2f} "
            f"f={m.frequency} w={m.weight:.3f}"
        )
    for i, p in enumerate(res.passages, 1):
        snippet = " ".join(p.text.split())[:160]
        lines.append(f"{i}. [{p.score:.4f}] {p.title} ({p.id})\n   {snippet}")
        lines.append(f"   [{i}] {citation(getattr(p, 'provenance', None), p.doc_id)}")
    t = ", ".join(f"{k} {v * 1000:.0f}ms" for k, v in res.timings.items())
    lines.append(f"timings: {t}; tokens: {tokens(res.input_tokens, res.output_tokens)}")
    return "\n".join(lines)


def tokens(tin: int | None, tout: int | None) -> str:
    """An LLM call's counts as reports show them: unknown where the server sent none."""
    if tin is None or tout is None:
        return "unknown (the LLM server sent no counts)"
    return f"{tin} in / {tout} out"


def citation(provenance: Any, doc_id: str) -> str:
    """A passage's citation line from its `Provenance`, or the service's JSON of one."""
    from terag_neo4j.core.provenance import Provenance

    prov = provenance if isinstance(provenance, Provenance) else Provenance.from_map(provenance)
    return prov.citation(doc_id)


def format_answer(ans: Any) -> str:
    """The answer, then a citation line for each passage its markers name, then its claims
    that name none."""
    lines = [f"answer: {ans.answer}"]
    if getattr(ans, "cut", False):
        lines[0] += "  (cut: the reply reached the reader's token cap)"
    lines += [f"  [{c.marker}] {citation(c.provenance, c.doc_id)}" for c in ans.citations]
    lines += [f"  uncited: {claim}" for claim in ans.uncited]
    return "\n".join(lines)
