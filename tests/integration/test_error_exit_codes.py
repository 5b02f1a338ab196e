"""Error handling against the real Neo4j: wrong credentials are an auth error with their own exit
code, not "Neo4j unavailable"; a namespace that does not exist is still "not found"."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j import cli
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.store import Neo4jUnavailable
from terag_neo4j.store.connection import Neo4jAuthError

from .conftest import connection_env

pytestmark = pytest.mark.integration


def test_wrong_credentials_exit_6_with_one_line(
    base_settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for var, value in connection_env(base_settings).items():
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("NEO4J_PASSWORD", "not-the-password")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["stats", "-n", "anything"]) == cli.EXIT_AUTH
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "NEO4J_PASSWORD" in err[0] and "unavailable" not in err[0]

    wrong = base_settings.with_overrides(neo4j_password="not-the-password")
    with pytest.raises(Neo4jAuthError) as refused:
        TeragClient(wrong, namespace="anything")
    assert not isinstance(refused.value, Neo4jUnavailable)


def test_a_missing_namespace_is_still_not_found(
    base_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var, value in connection_env(base_settings).items():
        monkeypatch.setenv(var, value)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["stats", "-n", "no_such_namespace_here"]) == cli.EXIT_NOT_FOUND
