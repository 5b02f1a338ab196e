"""`terag demo --answer` (what `make demo` runs) end to end: the real Neo4j, the real Ollama with
the default SmolLM2-135M model extracting and reading. The demo shows passages of a zero-token
graph first, then must answer its question right, in one line, before the passages of Ollama's
graph and the token ledger."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import Driver

from terag_neo4j.config import Settings
from tests.fixtures.neo4j import Neo4jConn, wipe_namespace

pytestmark = [pytest.mark.integration, pytest.mark.ollama]

TERAG = [sys.executable, "-m", "terag_neo4j.cli"]


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's own home: its extractions of the sample stay out of the session's, where
    other tests count fresh extractions of the same passages."""
    return tmp_path_factory.mktemp("demo-home")


@pytest.fixture
def demo_env(neo4j_conn: Neo4jConn, demo_home: Path, ollama_settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TERAG_")}
    env.update(
        NEO4J_URI=neo4j_conn.uri,
        NEO4J_USER=neo4j_conn.user,
        NEO4J_PASSWORD=neo4j_conn.password,
        NEO4J_DATABASE=neo4j_conn.database,
        OLLAMA_HOST=ollama_settings.ollama_host,
        TERAG_HOME=str(demo_home),  # the second test reuses the first's extractions
        TERAG_LLM_MODEL=ollama_settings.llm_model,
    )
    return env


def demo(env: dict[str, str], namespace: str, *extra: str) -> str:
    proc = subprocess.run(
        [*TERAG, "demo", "--answer", "-n", namespace, *extra],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture
def spacy_twin(neo4j_driver: Driver, neo4j_conn: Neo4jConn, namespace: str) -> Iterator[str]:
    """The namespace the demo's first passages come from, wiped afterwards."""
    twin = f"{namespace}-spacy"
    try:
        yield twin
    finally:
        wipe_namespace(neo4j_driver, neo4j_conn.database, twin)


def test_demo_answers_its_question_in_one_line_first(
    demo_env: dict[str, str], namespace: str, spacy_twin: str
) -> None:
    lines = demo(demo_env, namespace).splitlines()
    # First the passages of a zero-token spaCy graph, shown before Ollama extracts its own
    main = next(i for i, line in enumerate(lines) if line.startswith("ingest "))
    first = lines[:main]
    assert first[0].startswith("first passages, from a zero-token spaCy graph: ingest ")
    assert f"'{spacy_twin}'" in first[0]
    assert "query: Who designed the Volkswagen Beetle?" in first
    assert any("beetle.md" in line for line in first)
    assert any(line.startswith("next: the graph Ollama extracts") for line in first)
    out = lines[main:]
    answers = [i for i, line in enumerate(out) if line.startswith("answer: ")]
    assert len(answers) == 1, out
    at = answers[0]
    # the answer, then the markers of the passages it cites ("[1]"), nothing else
    assert re.fullmatch(r"answer: Ferdinand Porsche( \[\d+\])*", out[at]), out[at]
    assert out[at + 1] == ""  # one line, then the passages
    query = out.index("query: Who designed the Volkswagen Beetle?")
    assert at < query
    assert any("beetle.md" in line for line in out[query:])
    ledger = next(i for i, line in enumerate(out) if line.startswith("stage "))
    assert ledger > query
    stages = {line.split()[0] for line in out[ledger + 2 :] if line.strip()}
    assert {"answer", "total"} <= stages
    # everything before the answer is the ingest report, not the reader's output
    assert out[0].startswith("ingest ")
    # it ends with what just happened and the next commands, after the ledger
    recap = out.index("what just happened:")
    assert ledger < recap < out.index("next:")
    assert "  asked: Who designed the Volkswagen Beetle?" in out[recap:]
    assert any(line.strip().startswith("terag ask ") for line in out[recap:])


def test_demo_json_is_one_object_with_the_answer_and_score_kind(
    demo_env: dict[str, str], namespace: str
) -> None:
    data = json.loads(demo(demo_env, namespace, "--json"))
    assert re.fullmatch(r"Ferdinand Porsche( \[\d+\])*", data["answer"]), data["answer"]
    assert data["ingest"]["namespace"] == namespace
    res = data["retrieval"]
    assert (res["mode"], res["score_kind"]) == ("pagerank", "pagerank_mass")
    assert "fallback_reason" in res
    assert res["passages"][0]["doc_id"].endswith("beetle.md")
    assert 0 < data["answer_tokens"]["output"] <= 32
