"""The in-process commands: index, retrieve, ask, stats, namespaces, delete, export, import,
demo."""

from __future__ import annotations

import argparse
import logging
import os
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from terag_neo4j.cli.exits import EXIT_BAD_FILES, EXIT_NOT_FOUND, EXIT_OK, UsageError
from terag_neo4j.cli.output import emit, format_answer, format_retrieval

log = logging.getLogger(__name__)

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "data" / "sample"


def _settings(args: argparse.Namespace) -> Any:
    from terag_neo4j.config import Settings

    overrides: dict[str, Any] = {}
    for name in (
        "namespace",
        "extractor",
        "top_k",
        "llm_budget",
        "budget_selection",
        "budget_merge",
        "cooccurrence",
    ):
        value = getattr(args, name, None)
        if value is not None:
            overrides[name] = value
    if getattr(args, "command", None) in ("retrieve", "ask") and "extractor" in overrides:
        # -e of retrieve/ask picks the query NER backend; without it the namespace's is used.
        overrides["query_extractor"] = overrides.pop("extractor")
    return Settings().with_overrides(**overrides)


def _client(args: argparse.Namespace, embedder: Any = None) -> Any:
    from terag_neo4j.client import TeragClient

    return TeragClient(_settings(args), embedder=embedder)


def _through_service(args: argparse.Namespace) -> int | None:
    """The command run by the service that --url or TERAG_URL names; None: none is named."""
    from terag_neo4j.cli import remote_commands as cli_remote
    from terag_neo4j.cli.remote_settings import service_url

    url = service_url(args)
    return None if url is None else cli_remote.run(args, url)


def cmd_index(args: argparse.Namespace) -> int:
    if args.prune:
        from terag_neo4j.cli.remote_settings import service_url

        if service_url(args):
            raise UsageError("terag index --prune works on Neo4j directly, not through a service")
    if (code := _through_service(args)) is not None:
        return code
    from terag_neo4j.indexing.loading import iter_sources

    globs = {"include": args.include, "exclude": args.exclude}
    for _ in iter_sources(args.paths, **globs):  # missing paths, empty folders: say so first
        pass
    errors: list[str] = []
    with _client(args) as terag:
        report = terag.index(
            args.paths, progress=not args.quiet, errors=errors, prune=args.prune, **globs
        )
    text = report.summary()
    if errors:
        text += f"\n  skipped {len(errors)} file(s):\n" + "\n".join(f"    {e}" for e in errors)
    record = {
        **report.to_record(),
        "written_documents": report.written_documents,
        "missing_documents": report.missing_documents,
        "warnings": report.warnings,
        "skipped": errors,
    }
    emit(args, record, text)
    return EXIT_BAD_FILES if errors else EXIT_OK


def cmd_retrieve(args: argparse.Namespace) -> int:
    if (code := _through_service(args)) is not None:
        return code
    with _client(args) as terag:
        res = terag.retrieve(args.question, top_k=args.top_k, mode=args.mode, rerank=args.rerank)
    emit(args, res, format_retrieval(res))
    return EXIT_OK


def cmd_ask(args: argparse.Namespace) -> int:
    if (code := _through_service(args)) is not None:
        return code
    with _client(args) as terag:
        ans = terag.answer(args.question, top_k=args.top_k)
        ledger = terag.ledger.summary()
    text = f"{format_answer(ans)}\n\n{format_retrieval(ans.retrieval)}\n\n{ledger}"
    emit(args, ans, text)
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    with _client(args) as terag:
        info = terag.stats()
    text = "\n".join(f"{k}: {v}" for k, v in asdict(info).items() if k != "runs")
    text += f"\ningest runs: {len(info.runs)}"
    emit(args, info, text)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    if (code := _through_service(args)) is not None:
        return code
    with _client(args) as terag:
        out = terag.export_namespace(args.file, args.namespace)
    size = out.stat().st_size
    emit(
        args,
        {"namespace": args.namespace, "file": str(out), "bytes": size},
        f"exported namespace {args.namespace!r} to {out} ({size} bytes)",
    )
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    if (code := _through_service(args)) is not None:
        return code
    with _client(args) as terag:
        report = terag.import_namespace(args.file, args.namespace)
    text = (
        f"imported {args.file} into namespace {report.namespace!r} (exported from "
        f"{report.source!r}): {report.passages} passages, {report.concepts} concepts, "
        f"{report.has_passage} HAS_PASSAGE, {report.co_occurrence} CO_OCCURRENCE, "
        f"{report.synonym} SYNONYM in {report.seconds:.1f}s"
    )
    emit(args, asdict(report), text)
    return EXIT_OK


def cmd_namespaces(args: argparse.Namespace) -> int:
    with _client(args) as terag:
        infos = terag.namespaces()
    rows = [
        f"{n.name:24} v{n.version:<4} {n.passages:>8} passages {n.concepts:>8} concepts "
        f"{n.extractor or '-':8} tokens {n.input_tokens}/{n.output_tokens}"
        + (f" (+{n.tokens_unknown} extractions of unknown count)" if n.tokens_unknown else "")
        for n in infos
    ]
    emit(args, infos, "\n".join(rows) or "no namespaces yet")
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    if not args.all and not args.document:
        raise UsageError("terag delete: give a DOCUMENT id, or --all to drop the whole namespace")
    with _client(args) as terag:
        if args.all:
            terag.drop()
            emit(
                args,
                {"dropped": terag.settings.namespace},
                f"dropped namespace {terag.settings.namespace!r}",
            )
            return EXIT_OK
        ids = terag.document_ids(args.document)  # an id, or the path `index` read it from
        n = sum(terag.delete(d) for d in ids)
    named = ", ".join(repr(d) for d in ids) or repr(args.document)
    emit(args, {"deleted_passages": n, "documents": ids}, f"deleted {n} passages of {named}")
    return EXIT_OK if n else EXIT_NOT_FOUND


def _warm_embedder(settings: Any, out: list[Any]) -> None:
    """Import the model stack and load the embedder (fetched or converted once, then cached on
    disk) into `out`: what the demo's indexing would otherwise do after the services are up. A
    failure here is the indexing's to report."""
    try:
        from terag_neo4j.embeddings import settings_embedder

        embedder = settings_embedder(settings.embedding_model, settings)
        embedder.embed(["warm-up"])
        out.append(embedder)
    except Exception as e:  # reported again, in context, when the indexing loads it
        log.debug("embedder warm-up failed: %s", e)


def cmd_demo(args: argparse.Namespace) -> int:
    """Start what is missing, index the bundled sample, answer one question."""
    from terag_neo4j.cli.demo import recap
    from terag_neo4j.config import Settings

    settings = Settings()
    extract_with_llm = (args.extractor or settings.extractor) == "ollama"
    from terag_neo4j.local.services import start_services

    if args.prepare:
        start_services(settings, ollama=not args.no_ollama)
        return EXIT_OK
    # A first run's Ollama build takes minutes: fetch and load the embedder meanwhile, and show
    # retrieved passages before Ollama is there.
    from terag_neo4j.cli import demo

    warmed: list[Any] = []
    warm = threading.Thread(target=_warm_embedder, args=(settings, warmed), daemon=True)
    warm.start()
    reader = demo.ollama_in_background(settings) if args.answer or extract_with_llm else None
    start_services(settings, ollama=False)
    warm.join()
    args.namespace = args.namespace or "demo"
    args.top_k = None
    args.mode = None
    embedder = warmed[0] if warmed else None
    early = not args.json
    if early and extract_with_llm:
        # Ollama extracts the graph: a minute of extraction on a small machine, after its build
        # on a first run. The first passages come from a zero-token spaCy graph meanwhile.
        demo.spacy_preview(_settings(args), embedder, args.question, SAMPLE_DIR)
    if reader is not None and extract_with_llm:
        os.environ["OLLAMA_HOST"] = reader.result()
    shown = False
    # One client: its ledger holds every token the demo spends (extraction, answer).
    with _client(args, embedder) as terag:
        # A file's id is its absolute path (documents.document_id), where the package lives.
        report = terag.index([SAMPLE_DIR], progress=not args.json)
        if reader is not None and not extract_with_llm:
            if early and not reader.done():
                demo.show_passages(report.summary(), terag.retrieve(args.question))
                shown = True
            os.environ["OLLAMA_HOST"] = reader.result()
            terag.settings = terag.settings.with_overrides(ollama_host=os.environ["OLLAMA_HOST"])
        ans = terag.answer(args.question) if args.answer else None
        res = ans.retrieval if ans is not None else terag.retrieve(args.question)
        ledger = terag.ledger.summary()
        info = terag.stats()
    # The answer first (one line), then the passages it was read from, then what it cost, then
    # what just happened and what to try next; the report and passages already shown go first.
    head = f"answer: {ans.answer}\n\n" if ans is not None else ""
    if shown:
        text = f"{head}{ledger}"
    else:
        text = f"{report.summary()}\n\n{head}{format_retrieval(res)}\n\n{ledger}"
    question, answer = args.question, ans.answer if ans is not None else None
    text += "\n\n" + recap(terag.settings, info, report, question, answer, str(SAMPLE_DIR))
    obj = {"ingest": report.to_record(), "answer": ans.answer if ans else None, "retrieval": res}
    if ans is not None:
        obj["answer_tokens"] = {"input": ans.input_tokens, "output": ans.output_tokens}
    emit(args, obj, text)
    return EXIT_OK
