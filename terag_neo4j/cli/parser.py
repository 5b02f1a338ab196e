"""The `terag` argument parser: the core commands here, the others registered by their modules on demand."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Sequence
from typing import Any

from terag_neo4j.cli.commands import (
    cmd_ask,
    cmd_delete,
    cmd_demo,
    cmd_export,
    cmd_import,
    cmd_index,
    cmd_namespaces,
    cmd_retrieve,
    cmd_stats,
)

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
    s.add_argument("-e", "--extractor", choices=["ollama", "spacy"], help="extraction backend")
    s.add_argument(
        "--llm-budget",
        type=float,
        metavar="BETA",
        help="budget mode: spaCy indexes every passage, the extractor (ollama) only "
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
            choices=["ollama", "spacy"],
            help="query NER backend, used when TERAG_LINKING=ner (default: the namespace's)",
        )
        if name == "retrieve":
            s.add_argument(
                "--mode",
                choices=["pagerank", "dense", "hybrid", "flat"],
                help="ranking: the graph walk (default), dense only, the walk fused with dense, "
                "or flat (BM25 and dense fused, no graph: the baseline to compare with)",
            )
            s.add_argument(
                "--rerank",
                action=argparse.BooleanOptionalAction,
                help="re-score the top passages with TERAG_RERANKER (default: when it is set)",
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
    s = sub.add_parser("export", help="write a namespace's archive: graph, vectors and ledger")
    s.add_argument("namespace", help="the namespace to export")
    s.add_argument("file", help="the archive to write (a zip; docs/operations.md)")
    s.add_argument("--url", help=URL_HELP)
    common(s, ns=False)
    s.set_defaults(func=cmd_export)
    s = sub.add_parser(
        "import", help="load a namespace's archive into a new namespace (no extraction)"
    )
    s.add_argument("file", help="an archive written by `terag export`")
    s.add_argument(
        "-n", "--namespace", help="the namespace to create (default: the one it was exported from)"
    )
    s.add_argument("--url", help=URL_HELP)
    common(s, ns=False)
    s.set_defaults(func=cmd_import)
    s = sub.add_parser("demo", help="start services, index the bundled sample, ask a question")
    s.add_argument("question", nargs="?", default="Who designed the Volkswagen Beetle?")
    s.add_argument("-e", "--extractor", choices=["ollama", "spacy"])
    s.add_argument("--answer", action="store_true", help="also generate an answer with Ollama")
    s.add_argument(
        "--prepare",
        action="store_true",
        help="only start Neo4j and Ollama (building it on first use), then exit",
    )
    s.add_argument(
        "--no-ollama",
        action="store_true",
        help="with --prepare: start Neo4j only (the demo starts Ollama when its build is done)",
    )
    common(s)
    s.set_defaults(func=cmd_demo)

    _attach_optional(sub, None if argv is None else _command(argv))
    return p


# Subcommands registered by other modules, by name: module and help (tests/unit/test_cli_fast.py
# checks that these match what the modules register). Other distributions add theirs through
# the entry-point group below (`plugin_commands`).
OPTIONAL_COMMANDS: dict[str, tuple[str, str]] = {
    "server": ("terag_neo4j.local.neo4j_cli", "local Neo4j + GDS server (no Docker needed)"),
    "ollama": (
        "terag_neo4j.local.ollama_cli",
        "Build, start and stop the local Ollama server with the project's model",
    ),
    "serve": (
        "terag_neo4j.service.serve_command",
        "run the HTTP API and MCP (/mcp) service over every namespace",
    ),
    "mcp": (
        "terag_neo4j.service.serve_command",
        "serve the MCP tools over stdio (for an agent that starts terag itself)",
    ),
}


# A distribution installed beside terag (the bench, tools/terag-bench) names a module here whose
# `COMMANDS` maps each subcommand to its help line and whose `register_cli(subparsers)` adds them;
# the module is imported for `terag --help`, so it must import nothing heavy at its top.
COMMANDS_GROUP = "terag_neo4j.commands"


def plugin_commands() -> dict[str, tuple[str, str]]:
    """The subcommands of installed distributions (`COMMANDS_GROUP`), as `OPTIONAL_COMMANDS`."""
    from importlib.metadata import entry_points

    found: dict[str, tuple[str, str]] = {}
    for ep in entry_points(group=COMMANDS_GROUP):
        try:
            commands: dict[str, str] = getattr(ep.load(), "COMMANDS", {})
        # A broken or half-removed add-on must not take `terag server start` down with it, nor
        # add a line to every command's one-line errors; the add-on's own script shows its error.
        except Exception as e:
            logging.getLogger(__name__).debug(
                "skipping the commands of %s (%s): %s", ep.value, type(e).__name__, e
            )
            continue
        found |= {name: (ep.value, helptext) for name, helptext in commands.items()}
    return found


def _command(argv: Sequence[str]) -> str:
    """The subcommand `argv` names ('' for none): its first word that is not an option."""
    return next((a for a in argv if not a.startswith("-")), "")


def _attach_optional(sub: Any, command: str | None = None) -> None:
    """Subcommands owned by other modules (server managers, service, installed plugins such as
    the bench): all of them (`command` None), or only the module of `command` and the others'
    names."""
    import importlib

    optional = OPTIONAL_COMMANDS | plugin_commands()
    modules = list(dict.fromkeys(m for m, _ in optional.values()))
    if command is not None:
        wanted = optional.get(command, ("", ""))[0]
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
        for name, (_, helptext) in optional.items():
            if name not in sub.choices:
                sub.add_parser(name, help=helptext, add_help=False)
