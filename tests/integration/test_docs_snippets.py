"""Every Python block of the README and the docs that needs a service runs against the real ones.

A page's blocks run in order in one scope, as a reader would paste them one after another:
unmarked blocks and `<!-- snippet: offline -->` ones against the test Neo4j; with the blocks
marked `<!-- snippet: ollama -->` too, against the test Ollama (that test is marked `ollama`).
The blocks read the server from the environment as a user's code does: the test sets
`NEO4J_URI`, `NEO4J_USER`, `NEO4J_PASSWORD` and `NEO4J_DATABASE` to the test server's (and
`OLLAMA_HOST` to the test Ollama's), and gives each namespace a block names (`namespace="wiki"`)
a name under the test's own namespace, so the blocks share no data with other tests. Each block
must run without an error and, where it prints, print something.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from terag_neo4j.config import Settings
from tests.fixtures.neo4j import Neo4jConn
from tests.unit.test_docs_snippets import PAGES, ROOT, Block, blocks, run_block

pytestmark = pytest.mark.integration

NAMESPACE_ARG = re.compile(r'namespace="([A-Za-z0-9_]+)"')


def pages_with(kind: str) -> list[Path]:
    return [p for p in PAGES if any(b.kind == kind for b in blocks(p))]


def localised(block: Block, namespace: str) -> Block:
    """The block with every `namespace="NAME"` renamed into the test's namespace."""
    code = NAMESPACE_ARG.sub(lambda m: f'namespace="{namespace}_{m.group(1)}"', block.code)
    return Block(block.page, block.line, block.lang, block.kind, code)


def close_all(scope: dict[str, object]) -> None:
    """Close what the blocks left open (clients, retrievers, drivers), as a program's exit would."""
    for value in list(scope.values()):
        module = type(value).__module__
        if module.startswith(("terag_neo4j", "neo4j")) and callable(getattr(value, "close", None)):
            with contextlib.suppress(Exception):  # already closed by the block itself
                value.close()  # type: ignore[attr-defined]


def run_page(page: Path, kinds: set[str], namespace: str) -> int:
    scope: dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    try:
        for block in blocks(page):
            if block.lang != "python" or block.kind not in kinds:
                continue
            out = run_block(localised(block, namespace), scope)
            if "print(" in block.code:
                assert out.strip(), f"{block.where} printed nothing"
            ran += 1
    finally:
        close_all(scope)
    return ran


@pytest.fixture()
def docs_env(neo4j_conn: Neo4jConn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the blocks index terag_neo4j/data/sample by its relative path
    monkeypatch.setenv("NEO4J_URI", neo4j_conn.uri)
    monkeypatch.setenv("NEO4J_USER", neo4j_conn.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_conn.password)
    monkeypatch.setenv("NEO4J_DATABASE", neo4j_conn.database)


@pytest.mark.parametrize("page", pages_with("neo4j"), ids=lambda p: p.name)
def test_docs_page_runs_against_neo4j(page: Path, namespace: str, docs_env: None) -> None:
    ran = run_page(page, {"offline", "neo4j"}, namespace)
    assert ran >= 1


@pytest.mark.ollama
@pytest.mark.parametrize("page", pages_with("ollama"), ids=lambda p: p.name)
def test_docs_page_runs_with_ollama(
    page: Path,
    namespace: str,
    docs_env: None,
    ollama_settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", ollama_settings.ollama_host)
    ran = run_page(page, {"offline", "neo4j", "ollama"}, namespace)
    assert ran >= 2
