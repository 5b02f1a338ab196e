"""`terag`: index a corpus into Neo4j and ask it questions, from the shell."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, fields, is_dataclass
from pathlib import Path
from typing import Any

from terag_neo4j.errors import TeragError

# Exit codes (docs/cli.md): 1 unexpected error, 2 usage (arguments, settings, unsupported file
# type), 3 Neo4j/Ollama unavailable, 4 not found (namespace, document, path, folder without
# supported files), 5 some input files could not be read (named; the others were indexed),
# 6 Neo4j refused the credentials, 7 Neo4j answered with an error (no GDS plugin or database,
# a write it does not allow, a deadlock or lock wait that outlasted the retries).
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_NOT_FOUND, EXIT_BAD_FILES = 0, 1, 2, 3, 4, 5
EXIT_AUTH, EXIT_NEO4J = 6, 7
SAMPLE_DIR = Path(__file__).resolve().parent / "data" / "sample"

DESCRIPTION = """\
TERAG on Neo4j: build a token-efficient knowledge graph from documents and retrieve
passages with GDS personalised PageRank.

quick start:
  terag server start                 start a local Neo4j + GDS (no Docker needed)
  terag index docs/ -n mydocs        extract concepts and write the graph
  terag ask "Who founded X?" -n mydocs
  terag demo                         all of the above on a bundled sample corpus

Settings come from the environment or .env (see .env.example): NEO4J_URI, NEO4J_USER,
NEO4J_PASSWORD, OLLAMA_HOST and TERAG_* (e.g. TERAG_EXTRACTOR=spacy).
"""


def _settings(args: argparse.Namespace) -> Any:
    from terag_neo4j.config import Settings

    overrides: dict[str, Any] = {}
    for name in (
        "namespace",
        "extractor",
        "top_k",
        "recorded_extractions",
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
    if getattr(args, "mode", None) == "hybrid":
        overrides["retrieval"] = {"hybrid": True}  # a retrieval knob, not a setting
    return Settings().with_overrides(**overrides)


def _client(args: argparse.Namespace) -> Any:
    from terag_neo4j.client import TeragClient

    return TeragClient(_settings(args))


def _to_jsonable(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        # Field by field (not asdict, which would turn nested results into plain dicts first), and
        # the derived values a result declares in `json_properties` (RetrievalResult.score_kind)
        out = {f.name: _to_jsonable(getattr(obj, f.name)) for f in fields(obj)}
        for name in getattr(obj, "json_properties", ()):
            out[name] = _to_jsonable(getattr(obj, name))
        return out
    if isinstance(obj, list | tuple):
        return [_to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): _to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, Path):
        return str(obj)
    return obj


def _emit(args: argparse.Namespace, obj: Any, text: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(_to_jsonable(obj), indent=2, default=str))
    else:
        print(text)


def _format_retrieval(res: Any) -> str:
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
        lines.append(f"   [{i}] {_citation(getattr(p, 'provenance', None), p.doc_id)}")
    t = ", ".join(f"{k} {v * 1000:.0f}ms" for k, v in res.timings.items())
    lines.append(f"timings: {t}; tokens: {res.input_tokens} in / {res.output_tokens} out")
    return "\n".join(lines)


def _citation(provenance: Any, doc_id: str) -> str:
    """A passage's citation line from its `Provenance`, or the service's JSON of one."""
    from terag_neo4j.provenance import Provenance

    prov = provenance if isinstance(provenance, Provenance) else Provenance.from_map(provenance)
    return prov.citation(doc_id)


def _format_answer(ans: Any) -> str:
    """The answer, then a citation line for each passage its markers name, then its claims
    that name none."""
    lines = [f"answer: {ans.answer}"]
    lines += [f"  [{c.marker}] {_citation(c.provenance, c.doc_id)}" for c in ans.citations]
    lines += [f"  uncited: {claim}" for claim in ans.uncited]
    return "\n".join(lines)


# ---------------------------------------------------------------------- commands


def _through_service(args: argparse.Namespace) -> int | None:
    """The command run by the service that --url or TERAG_URL names; None: none is named."""
    from terag_neo4j.service import cli_remote

    url = cli_remote.service_url(args)
    return None if url is None else cli_remote.run(args, url)


def cmd_index(args: argparse.Namespace) -> int:
    if args.prune:
        from terag_neo4j.service import cli_remote

        if cli_remote.service_url(args):
            raise UsageError("terag index --prune works on Neo4j directly, not through a service")
    if (code := _through_service(args)) is not None:
        return code
    from terag_neo4j.documents import iter_sources

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
    _emit(args, record, text)
    return EXIT_BAD_FILES if errors else EXIT_OK


def cmd_retrieve(args: argparse.Namespace) -> int:
    if (code := _through_service(args)) is not None:
        return code
    with _client(args) as terag:
        res = terag.retrieve(args.question, top_k=args.top_k, mode=args.mode)
    _emit(args, res, _format_retrieval(res))
    return EXIT_OK


def cmd_ask(args: argparse.Namespace) -> int:
    if (code := _through_service(args)) is not None:
        return code
    with _client(args) as terag:
        ans = terag.answer(args.question, top_k=args.top_k)
        ledger = terag.ledger.summary()
    text = f"{_format_answer(ans)}\n\n{_format_retrieval(ans.retrieval)}\n\n{ledger}"
    _emit(args, ans, text)
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    with _client(args) as terag:
        info = terag.stats()
    text = "\n".join(f"{k}: {v}" for k, v in asdict(info).items() if k != "runs")
    text += f"\ningest runs: {len(info.runs)}"
    _emit(args, info, text)
    return EXIT_OK


def cmd_namespaces(args: argparse.Namespace) -> int:
    with _client(args) as terag:
        infos = terag.namespaces()
    rows = [
        f"{n.name:24} v{n.version:<4} {n.passages:>8} passages {n.concepts:>8} concepts "
        f"{n.extractor or '-':8} tokens {n.input_tokens}/{n.output_tokens}"
        for n in infos
    ]
    _emit(args, infos, "\n".join(rows) or "no namespaces yet")
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    if not args.all and not args.document:
        raise UsageError("terag delete: give a DOCUMENT id, or --all to drop the whole namespace")
    with _client(args) as terag:
        if args.all:
            terag.drop()
            _emit(
                args,
                {"dropped": terag.settings.namespace},
                f"dropped namespace {terag.settings.namespace!r}",
            )
            return EXIT_OK
        ids = terag.document_ids(args.document)  # an id, or the path `index` read it from
        n = sum(terag.delete(d) for d in ids)
    named = ", ".join(repr(d) for d in ids) or repr(args.document)
    _emit(args, {"deleted_passages": n, "documents": ids}, f"deleted {n} passages of {named}")
    return EXIT_OK if n else EXIT_NOT_FOUND


def cmd_demo(args: argparse.Namespace) -> int:
    """Start what is missing, index the bundled sample, answer one question."""
    from terag_neo4j.config import Settings
    from terag_neo4j.demo import recap

    settings = Settings()
    need_ollama = (args.extractor or settings.extractor) == "ollama" or args.answer
    from terag_neo4j.server.services import start_services

    ollama_host = start_services(settings, ollama=need_ollama or args.prepare)
    if args.prepare:
        return EXIT_OK
    if ollama_host is not None:
        os.environ["OLLAMA_HOST"] = ollama_host
    args.namespace = args.namespace or "demo"
    args.top_k = None
    args.mode = None
    # One client: its ledger holds every token the demo spends (extraction, answer).
    with _client(args) as terag:
        # A file's id is its absolute path (documents.document_id), where the package lives.
        report = terag.index([SAMPLE_DIR], progress=not args.json)
        ans = terag.answer(args.question) if args.answer else None
        res = ans.retrieval if ans is not None else terag.retrieve(args.question)
        ledger = terag.ledger.summary()
        info = terag.stats()
    # The answer first (one line), then the passages it was read from, then what it cost, then
    # what just happened and what to try next.
    head = f"answer: {ans.answer}\n\n" if ans is not None else ""
    text = f"{report.summary()}\n\n{head}{_format_retrieval(res)}\n\n{ledger}"
    question, answer = args.question, ans.answer if ans is not None else None
    text += "\n\n" + recap(terag.settings, info, report, question, answer, str(SAMPLE_DIR))
    obj = {"ingest": report.to_record(), "answer": ans.answer if ans else None, "retrieval": res}
    if ans is not None:
        obj["answer_tokens"] = {"input": ans.input_tokens, "output": ans.output_tokens}
    _emit(args, obj, text)
    return EXIT_OK


# ---------------------------------------------------------------------- parser


URL_HELP = "a running `terag serve` to use (default TERAG_URL; key: TERAG_API_KEY)"


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `argv`, the subcommands of other modules that `argv` does not
    name are listed by name and help only, so `terag --help` and a wrong argument answer
    without importing them (and the driver, Ollama's client, the bench they import)."""
    p = argparse.ArgumentParser(
        prog="terag", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging and full tracebacks")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def common(sp: argparse.ArgumentParser, ns: bool = True) -> None:
        if ns:
            sp.add_argument(
                "-n", "--namespace", help="corpus namespace (default: TERAG_NAMESPACE or 'default')"
            )
        sp.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser(
        "index", help="index files or folders (.pdf, .docx, .html, .md, .txt, .jsonl)"
    )
    s.add_argument("paths", nargs="+", help="files or folders (searched recursively)")
    s.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="in folders, index only files matching GLOB (repeatable), e.g. '*.pdf'",
    )
    s.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="in folders, skip files and folders matching GLOB (repeatable), e.g. 'drafts/**'",
    )
    s.add_argument(
        "--prune",
        action="store_true",
        help="delete the documents of files gone from the folders (without it they are listed)",
    )
    s.add_argument(
        "-e", "--extractor", choices=["ollama", "spacy", "recorded"], help="extraction backend"
    )
    s.add_argument(
        "--recorded-extractions", type=Path, help="JSONL of recorded extractions (recorded backend)"
    )
    s.add_argument(
        "--llm-budget",
        type=float,
        metavar="BETA",
        help="budget mode: spaCy indexes every passage, the extractor (ollama or recorded) only "
        "the fraction BETA (0..1) that the selection rule ranks first (TERAG_LLM_BUDGET)",
    )
    s.add_argument(
        "--budget-selection",
        choices=["pagerank", "degree", "knn_pagerank"],
        help="how core passages are ranked over the spaCy graph (TERAG_BUDGET_SELECTION)",
    )
    s.add_argument(
        "--budget-merge",
        choices=["add", "replace"],
        help="core passages' LLM concepts are added to spaCy's or replace them (TERAG_BUDGET_MERGE)",
    )
    s.add_argument(
        "--cooccurrence",
        choices=["lazy", "eager"],
        help="CO_OCCURRENCE pairs: built when a walk first needs them, or now and kept at every "
        "write; eager on an indexed namespace only builds them (TERAG_COOCCURRENCE)",
    )
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    s.add_argument("--url", help=URL_HELP)
    common(s)
    s.set_defaults(func=cmd_index)

    for name, func, helptext in (
        ("retrieve", cmd_retrieve, "top passages for a question (no answer generation)"),
        ("ask", cmd_ask, "retrieve, then answer with the reader LLM"),
    ):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("question")
        s.add_argument("-k", "--top-k", type=int, help="passages to return (default 5)")
        s.add_argument(
            "-e",
            "--extractor",
            choices=["ollama", "spacy", "recorded"],
            help="query NER backend, used when TERAG_LINKING=ner (default: the namespace's)",
        )
        if name == "retrieve":
            s.add_argument(
                "--mode", choices=["pagerank", "dense", "hybrid"], help="ranking (default pagerank)"
            )
        s.add_argument("--url", help=URL_HELP)
        common(s)
        s.set_defaults(func=func)

    s = sub.add_parser("stats", help="counts, tokens spent and ingest runs of a namespace")
    common(s)
    s.set_defaults(func=cmd_stats)
    s = sub.add_parser("namespaces", help="list namespaces")
    common(s, ns=False)
    s.set_defaults(func=cmd_namespaces)
    s = sub.add_parser("delete", help="delete a document's passages, or a whole namespace")
    s.add_argument(
        "document", nargs="?", help="document id (as indexed), or the path it was indexed from"
    )
    s.add_argument("--all", action="store_true", help="drop the whole namespace")
    common(s)
    s.set_defaults(func=cmd_delete)
    s = sub.add_parser("demo", help="start services, index the bundled sample, ask a question")
    s.add_argument("question", nargs="?", default="Who designed the Volkswagen Beetle?")
    s.add_argument("-e", "--extractor", choices=["ollama", "spacy", "recorded"])
    s.add_argument("--answer", action="store_true", help="also generate an answer with Ollama")
    s.add_argument(
        "--prepare",
        action="store_true",
        help="only start Neo4j and Ollama (building it on first use), then exit",
    )
    common(s)
    s.set_defaults(func=cmd_demo)

    _attach_optional(sub, None if argv is None else _command(argv))
    return p


# Subcommands registered by other modules, by name: module and help (tests/unit/test_cli_fast.py
# checks that these match what the modules register).
OPTIONAL_COMMANDS: dict[str, tuple[str, str]] = {
    "server": ("terag_neo4j.server.cli", "local Neo4j + GDS server (no Docker needed)"),
    "ollama": (
        "terag_neo4j.server.ollama_cli",
        "Build, start and stop the local Ollama server with the project's model",
    ),
    "bench": (
        "terag_neo4j.eval.cli",
        "Recall@k, EM/F1, tokens and latency on multi-hop QA data, with baselines",
    ),
    "bench-extraction": (
        "terag_neo4j.eval.cli",
        "Entity recall/precision, grounding and tokens per passage of extractors",
    ),
    "bench-index": (
        "terag_neo4j.eval.cli",
        "Indexing throughput, tokens and memory on a benchmark corpus",
    ),
    "bench-latency": (
        "terag_neo4j.eval.cli",
        "Retrieval latency per stage, GDS compute time and the in-process PageRank reference",
    ),
    "bench-load": (
        "terag_neo4j.eval.cli",
        "Throughput and latency with concurrent clients, optionally while an ingest writes",
    ),
    "bench-scale": (
        "terag_neo4j.eval.cli",
        "ingest, store, memory, projection and latency at 10k, 100k, 1M synthetic passages",
    ),
    "bench-isolation": (
        "terag_neo4j.eval.cli",
        "whether namespace A's top-10 moves when namespace B is indexed, deleted, dropped",
    ),
    "bench-serve": (
        "terag_neo4j.eval.cli",
        "HTTP service throughput, latency, errors and memory under concurrent clients",
    ),
    "bench-documents": (
        "terag_neo4j.eval.cli",
        "Reading a generated long PDF: seconds and peak memory (tracemalloc and RSS)",
    ),
    "serve": (
        "terag_neo4j.service.cli",
        "run the HTTP API and MCP (/mcp) service over every namespace",
    ),
    "mcp": (
        "terag_neo4j.service.cli",
        "serve the MCP tools over stdio (for an agent that starts terag itself)",
    ),
}


def _command(argv: Sequence[str]) -> str:
    """The subcommand `argv` names ('' for none): its first word that is not an option."""
    return next((a for a in argv if not a.startswith("-")), "")


def _attach_optional(sub: Any, command: str | None = None) -> None:
    """Subcommands owned by other modules (server managers, benchmark, service): all of them
    (`command` None), or only the module of `command` and the others' names."""
    import importlib

    modules = list(dict.fromkeys(m for m, _ in OPTIONAL_COMMANDS.values()))
    if command is not None:
        wanted = OPTIONAL_COMMANDS.get(command, ("", ""))[0]
        modules = [m for m in modules if m == wanted]
    for module in modules:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name and module.startswith(e.name):
                continue
            raise
        register: Callable[[Any], None] = mod.register_cli
        register(sub)
    if command is not None:
        for name, (_, helptext) in OPTIONAL_COMMANDS.items():
            if name not in sub.choices:
                sub.add_parser(name, help=helptext, add_help=False)


class UsageError(TeragError, ValueError):
    """A command used the wrong way (exit 2)."""


def _error_line(e: BaseException) -> tuple[str, int]:
    from terag_neo4j.documents import InputError, InputNotFound
    from terag_neo4j.store import GraphStoreError, NamespaceNotFound, Neo4jUnavailable
    from terag_neo4j.store.connection import Neo4jAuthError

    if isinstance(e, NamespaceNotFound | InputNotFound | FileNotFoundError):
        return str(e), EXIT_NOT_FOUND
    if isinstance(e, Neo4jUnavailable):
        return str(e), EXIT_UNAVAILABLE
    if isinstance(e, Neo4jAuthError):
        return str(e), EXIT_AUTH
    if isinstance(e, GraphStoreError):
        return str(e), EXIT_NEO4J
    from terag_neo4j.server.ollama_home import OllamaSetupError

    if isinstance(e, OllamaSetupError):
        return str(e), EXIT_UNAVAILABLE
    try:
        from terag_neo4j.llm import LLMError

        if isinstance(e, LLMError):
            return str(e), EXIT_UNAVAILABLE
    except ImportError:
        pass
    if isinstance(e, InputError | ValueError):
        return str(e), EXIT_USAGE
    return f"{type(e).__name__}: {e}", EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("neo4j", "httpx", "sentence_transformers", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if not args.verbose:
        # The driver logs each retry of a lost connection; the one-line error below says it all.
        logging.getLogger("neo4j").setLevel(logging.ERROR)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("terag: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if args.verbose:
            raise
        msg, code = _error_line(e)
        print(f"terag: error: {msg} (run with --verbose for the trace)", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
