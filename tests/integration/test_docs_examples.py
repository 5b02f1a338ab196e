"""The docs' LangChain, neo4j-graphrag and async examples (docs/integrations.md, docs/python.md),
run as written against the real Neo4j and Ollama, with what they print checked (the page-by-page
run of every block is tests/integration/test_docs_snippets.py).

Each section's ```python blocks are taken from its page and executed in order in one namespace
of names (a later block uses what an earlier one made), from the repository root (they index
`terag_neo4j/data/sample`). Only their namespace is renamed, `namespace="sample"` to the test's
own, so that a test run never writes to, or drops, a user's `sample`. Settings reach them as they
reach a user: through the environment (NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, OLLAMA_HOST).
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from terag_neo4j.config import Settings
from tests.fixtures.neo4j import Neo4jConn

pytestmark = [pytest.mark.integration, pytest.mark.ollama]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SAMPLE_NS = 'namespace="sample"'


def section_code(page: str, heading: str) -> list[str]:
    """The ```python blocks of the page's section under `## heading`, in order."""
    text = (DOCS / page).read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    body = text[start : end if end != -1 else len(text)]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


@pytest.fixture
def readme_env(
    monkeypatch: pytest.MonkeyPatch,
    neo4j_conn: Neo4jConn,
    base_settings: Settings,
    ollama_settings: Settings,
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NEO4J_URI", neo4j_conn.uri)
    monkeypatch.setenv("NEO4J_USER", neo4j_conn.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_conn.password)
    monkeypatch.setenv("NEO4J_DATABASE", neo4j_conn.database)
    monkeypatch.setenv("OLLAMA_HOST", ollama_settings.ollama_host)
    monkeypatch.setenv("TERAG_HOME", str(base_settings.home))


def run_section(page: str, heading: str, namespace: str, blocks: int) -> str:
    """Run the section's code as written (namespace renamed); what it printed."""
    code = section_code(page, heading)
    assert len(code) == blocks, f"{page} section {heading!r} has {len(code)} python blocks"
    assert any(SAMPLE_NS in c for c in code)
    scope: dict[str, object] = {"__name__": "__docs__"}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            for block in code:
                exec(
                    compile(block.replace(SAMPLE_NS, f'namespace="{namespace}"'), heading, "exec"),
                    scope,
                )
    finally:
        for name in ("retriever", "terag", "driver"):  # close what the example left open
            obj = scope.get(name)
            close = getattr(obj, "close", None)
            if callable(close):
                close()
    return out.getvalue()


def test_langchain_examples(readme_env: None, namespace: str) -> None:
    out = run_section("integrations.md", "LangChain", namespace, blocks=3).splitlines()
    # first block: four passages with their score kind, then the matched concepts
    ranked = [line for line in out if " pagerank_mass  " in line]
    assert len(ranked) == 4
    assert any("Volkswagen" in line for line in ranked)
    assert "'name': 'Beetle'" in out[4] or "Beetle" in out[4]
    # second block: added, found, deleted
    assert out[5:8] == ["['notes/piech.md']", "notes/piech.md", "True"]
    # third block: the chain's answer, from the real Ollama model
    assert len(out) == 9 and out[8].strip()


def test_graphrag_example(readme_env: None, namespace: str) -> None:
    out = run_section("integrations.md", "neo4j-graphrag", namespace, blocks=2).splitlines()
    ranked = out[:3]
    assert all(" pagerank_mass  " in line for line in ranked), out
    assert ranked[0].endswith("Volkswagen Beetle")
    assert out[3].startswith("pagerank ")
    answer = "\n".join(out[4:])
    assert "Porsche" in answer  # the pipeline's LLM read the retrieved passages


def test_async_example(readme_env: None, namespace: str) -> None:
    out = run_section("python.md", "Async", namespace, blocks=1).splitlines()
    assert len(out) == 3
    assert out[0].startswith("Who founded Porsche? [") and "Porsche" in out[0]
    assert out[1].startswith("Which state is Wolfsburg in? [") and "Wolfsburg" in out[1]
    assert int(out[2]) >= 8  # the sample corpus's passages
