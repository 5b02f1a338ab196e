"""What `terag demo` tells a new user: the passages as soon as they are retrieved, what it just
did at the end, and what to try next."""

from __future__ import annotations

import logging
import shlex
import sys
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from terag_neo4j.indexing.report import IngestReport

log = logging.getLogger(__name__)

WAITING = (
    "the reader (Ollama) is still being built or started: these passages need no LLM; "
    "the answer follows when it is ready"
)


def ollama_in_background(settings: Any) -> Future[str]:
    """Ollama started (built first, on a first run: minutes) on a thread of its own, so the
    demo starts Neo4j, indexes and retrieves meanwhile; the future holds its host. A daemon
    thread: a demo that fails first does not wait for a build to end."""
    from terag_neo4j.local.services import ensure_ollama

    done: Future[str] = Future()
    if settings.llm_backend != "ollama":  # the reader is a server of the user's: nothing to start
        done.set_result(str(settings.llm_url or ""))
        return done

    def run() -> None:
        try:
            done.set_result(ensure_ollama(settings))
        except BaseException as e:  # handed to whoever waits for the reader
            done.set_exception(e)

    threading.Thread(target=run, name="terag-ollama", daemon=True).start()
    return done


def show_passages(head: str, res: Any, note: str = WAITING) -> None:
    """The retrieved passages now, before the answer (stdout, as the rest of the demo)."""
    from terag_neo4j.cli.output import format_retrieval

    sys.stdout.write(f"{head}\n\n{format_retrieval(res)}\n\n{note}\n\n")
    sys.stdout.flush()


def spacy_preview(settings: Any, embedder: Any, question: str, sample: Path) -> bool:
    """For a namespace whose graph Ollama extracts (a minute on a small machine, after Ollama's
    build on a first run): the sample indexed first into `<namespace>-spacy` by spaCy (zero
    tokens, seconds) and its passages shown. False, and nothing shown, when spaCy is not
    installed or the preview fails: the demo goes on."""
    from terag_neo4j.client import TeragClient
    from terag_neo4j.errors import TeragError

    ns = f"{settings.namespace}-spacy"
    try:
        with TeragClient(
            settings.with_overrides(extractor="spacy", namespace=ns), embedder=embedder
        ) as terag:
            report = terag.index([sample], progress=False)
            res = terag.retrieve(question)
    except (TeragError, ImportError) as e:
        log.info("no passages before Ollama's graph: %s", e)
        return False
    head = f"first passages, from a zero-token spaCy graph: {report.summary().splitlines()[0]}"
    note = (
        f"next: the graph Ollama extracts into {settings.namespace!r}, its passages and the "
        "answer (a first run builds Ollama first: minutes)"
    )
    show_passages(head, res, note)
    return True


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
        ("terag serve", "the same over HTTP on 127.0.0.1:8000 (OpenAPI at /openapi.json)"),
        ("make test", "the whole test suite against the real services"),
    ]
    width = max(len(c) for c, _ in commands)
    lines.append("next:")
    lines += [f"  {c.ljust(width)}  # {why}" for c, why in commands]
    return "\n".join(lines)
