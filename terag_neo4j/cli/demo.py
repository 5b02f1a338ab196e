"""What `terag demo` tells a new user at the end: what it just did, and what to try next."""

from __future__ import annotations

import shlex
from typing import Any

from terag_neo4j.indexing.report import IngestReport


def recap(
    settings: Any,
    info: Any,
    report: IngestReport,
    question: str,
    answer: str | None,
    sample: str,
) -> str:
    """A few lines: what was indexed where (passages, concepts), the question and its answer,
    where to look at the graph, then the next commands to try on the same namespace."""
    ns = info.name
    q = shlex.quote(question)
    neo4j = settings.neo4j_uri or f"bolt://127.0.0.1:{settings.neo4j_bolt_port}"
    lines = [
        "what just happened:",
        f"  indexed {report.documents_total} documents from {sample}",
        f"    into namespace {ns!r} on {neo4j}: {info.passages} passages, {info.concepts} "
        f"concepts (extracted with {report.extractor or settings.extractor})",
        f"  asked: {question}",
    ]
    if answer is not None:
        lines.append(f"  answer: {answer.strip().splitlines()[0] if answer.strip() else '(empty)'}")
    if settings.neo4j_uri is None:
        lines.append(
            f"  the graph in Neo4j Browser: http://127.0.0.1:{settings.neo4j_http_port}/browser/ "
            "(`terag server status` shows the login)"
        )
    commands = [
        (f"terag ask {q} -n {ns}", "answer again from the graph (no re-indexing)"),
        (f"terag retrieve {q} -n {ns}", "the passages behind the answer, with scores"),
        ("terag index YOUR_FOLDER -n mydocs", "index your own files into a new namespace"),
        ("terag serve", "the same over HTTP on 127.0.0.1:8000 (OpenAPI at /docs)"),
        ("make test", "the whole test suite against the real services"),
    ]
    width = max(len(c) for c, _ in commands)
    lines.append("next:")
    lines += [f"  {c.ljust(width)}  # {why}" for c, why in commands]
    return "\n".join(lines)
