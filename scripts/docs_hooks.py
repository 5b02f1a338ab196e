"""MkDocs hooks: the docs' generated parts, made at build time so they cannot drift.

A page holds a marker (an HTML comment on a line of its own) and the build replaces it:

- `<!-- generated: settings user -->` and `<!-- generated: settings advanced -->`: the tables of
  `scripts/env_table.py`, read from `.env.example`, which `tests/unit/test_settings_documented.py`
  holds to every field of `Settings`;
- `<!-- generated: cli -->`: every command's `--help`, from the CLI's own argparse parser;
- `<!-- generated: http routes -->` and `<!-- generated: mcp tools -->`: the service's routes
  from its OpenAPI schema and its MCP tools from the MCP server, as `terag serve` builds them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from env_table import table  # noqa: E402

MARKERS: dict[str, Callable[[], str]] = {
    "<!-- generated: settings user -->": lambda: table("user"),
    "<!-- generated: settings advanced -->": lambda: table("advanced"),
    "<!-- generated: cli -->": lambda: cli_reference(),
    "<!-- generated: http routes -->": lambda: http_routes(),
    "<!-- generated: mcp tools -->": lambda: mcp_tools(),
}
HELP_WIDTH = "100"  # argparse wraps at $COLUMNS: fixed, so the page is the same on every machine


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cli_reference() -> str:
    """A section per command (and per `server` / `ollama` subcommand) with its `--help`."""
    from terag_neo4j.cli import build_parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        parser = build_parser()
        out = ["### terag", "", "```text", parser.format_help().rstrip(), "```", ""]
        for name, sub in _subcommands(parser).items():
            out += [f"### terag {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
            for child, leaf in _subcommands(sub).items():
                out += [f"#### terag {name} {child}", "", "```text"]
                out += [leaf.format_help().rstrip(), "```", ""]
        return "\n".join(out)
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


def _first_paragraph(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split()).replace("|", "/")


def _app() -> Any:
    from terag_neo4j.service.app import create_app
    from terag_neo4j.service.settings import ServiceSettings

    # Loopback and no keys: the routes and tools are the same whatever the caller exported
    return create_app(ServiceSettings(host="127.0.0.1", api_keys=None))


def http_routes() -> str:
    """The service's routes, each with its summary's first paragraph, from the OpenAPI schema."""
    rows = ["| method | path | what it does |", "|---|---|---|"]
    for path, ops in _app().openapi()["paths"].items():
        for method, op in ops.items():
            text = _first_paragraph(op.get("description") or op.get("summary"))
            rows.append(f"| {method.upper()} | `{path}` | {text} |")
    return "\n".join(rows)


def mcp_tools() -> str:
    """The MCP tools an agent sees, with their descriptions' first paragraph."""
    from terag_neo4j.service.mcp_tools import build_mcp

    app = _app()
    server = build_mcp(app.state.runtime, app.state.jobs, app.state.keys)
    rows = ["| tool | what it does |", "|---|---|"]
    for tool in asyncio.run(server.list_tools()):
        rows.append(f"| `{tool.name}` | {_first_paragraph(tool.description)} |")
    return "\n".join(rows)


def render(markdown: str) -> str:
    """The page with each marker replaced by what it stands for."""
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return render(markdown)
