"""The test fixtures' settings do not depend on the caller: a `.env` in the working directory
and `TERAG_*` knobs in the environment change nothing; only where the services are (NEO4J_*,
OLLAMA_HOST, TERAG_HOME and the local server's ports) comes from the environment. No services:
the session fixtures' functions are called with a stand-in connection."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.recipes import resolve
from tests.fixtures.neo4j import Neo4jConn
from tests.integration import conftest as integration

DOTENV = """\
TERAG_TOP_K=1
TERAG_PRESET=paper
TERAG_EXTRACTOR=spacy
TERAG_CHUNK_TOKENS=64
NEO4J_URI=bolt://from-dotenv:7687
TERAG_NEO4J_BOLT_PORT=1234
"""
CONN = Neo4jConn("bolt://127.0.0.1:7999", "neo4j", "secret", "neo4j", "env")


class Factory:
    """Stands in for pytest's TempPathFactory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def mktemp(self, name: str) -> Path:
        path = self.root / name
        path.mkdir()
        return path


def default(field: str) -> object:
    return Settings.model_fields[field].default


@pytest.fixture
def hostile_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with a `.env`, and knobs exported in the environment."""
    (tmp_path / ".env").write_text(DOTENV, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERAG_SYNONYM_THRESHOLD", "0.5")
    monkeypatch.setenv("TERAG_RETRIEVAL", '{"damping": 0.3}')
    assert Settings(neo4j_uri=CONN.uri).top_k == 1  # what the fixtures used to get
    return tmp_path


def test_base_settings_ignore_dotenv_and_the_callers_knobs(hostile_caller: Path) -> None:
    build = integration.base_settings.__wrapped__  # type: ignore[attr-defined]
    s: Settings = build(CONN, Factory(hostile_caller))
    assert (s.neo4j_uri, s.neo4j_user, s.neo4j_password) == (CONN.uri, CONN.user, CONN.password)
    assert s.top_k == default("top_k") == 5
    assert s.preset == "default" and s.retrieval == resolve("default", {})
    assert s.chunk_tokens == default("chunk_tokens")
    assert s.synonym_threshold == default("synonym_threshold")
    assert s.extractor == "spacy"  # the fixture's own choice


def test_fixture_settings_keep_only_where_the_services_are(
    hostile_caller: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fixtures.settings import fixture_settings

    monkeypatch.setenv("TERAG_HOME", str(hostile_caller / "home"))
    monkeypatch.setenv("TERAG_NEO4J_BOLT_PORT", "7887")
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:7887")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:11999")
    monkeypatch.setenv("TERAG_TOP_K", "3")
    s = fixture_settings()
    assert s.home == hostile_caller / "home" and s.neo4j_bolt_port == 7887
    assert s.neo4j_uri == "bolt://127.0.0.1:7887" and s.ollama_host == "http://127.0.0.1:11999"
    assert s.top_k == 5 and s.preset == "default" and s.extractor == default("extractor")
    assert s.synonym_threshold == default("synonym_threshold")
    assert s.retrieval == resolve("default", {})
    # with none of them set: the declared defaults, not the .env's NEO4J_URI or port
    for var in ("TERAG_HOME", "TERAG_NEO4J_BOLT_PORT", "NEO4J_URI", "OLLAMA_HOST"):
        monkeypatch.delenv(var)
    bare = fixture_settings()
    assert bare.neo4j_uri is None and bare.neo4j_bolt_port == default("neo4j_bolt_port")


def test_the_callers_knobs_leave_the_test_process() -> None:
    from tests.fixtures.settings import scrub_environment

    env = {
        "TERAG_TOP_K": "1",
        "TERAG_RETRIEVAL": "{}",
        "TERAG_HOME": "/h",
        "TERAG_NEO4J_BOLT_PORT": "7887",
        "TERAG_DATASETS": "/d",
        "NEO4J_URI": "bolt://x:1",
        "PATH": "/bin",
    }
    assert scrub_environment(env) == ["TERAG_RETRIEVAL", "TERAG_TOP_K"]
    assert sorted(env) == [
        "NEO4J_URI",
        "PATH",
        "TERAG_DATASETS",
        "TERAG_HOME",
        "TERAG_NEO4J_BOLT_PORT",
    ]


def test_budget_tests_find_their_dataset_under_terag_datasets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration import test_budget

    monkeypatch.setenv("TERAG_DATASETS", str(tmp_path))
    assert test_budget.folder() == tmp_path / "musique_hipporag_train100"
