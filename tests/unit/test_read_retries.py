"""Retry handling of `StoreCore.read` (an auto-commit read, which the driver never retries): a
unit test of error handling with a stand-in session that fails as a lost server does, then
answers. No Neo4j runs here; tests/integration and tests/faults read from a real one."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import Neo4jError, ServiceUnavailable

from terag_neo4j.store import GraphStore, Neo4jUnavailable


class FlakySession:
    """Fails the first `failures` statements with `error`, then returns no records."""

    def __init__(self, failures: int, error: Exception) -> None:
        self.failures = failures
        self.error = error
        self.runs = 0
        self.modes: list[bool] = []

    def run(self, query: str, parameters: dict[str, Any]) -> list[Any]:
        self.runs += 1
        if self.runs <= self.failures:
            raise self.error
        return []


def flaky_store(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, session: FlakySession
) -> GraphStore:
    driver = GraphDatabase.driver("bolt://127.0.0.1:9", auth=("neo4j", "x"))  # never connected
    store = GraphStore(driver, timeout_s=30, uri="bolt://127.0.0.1:9")
    request.addfinalizer(driver.close)

    @contextmanager
    def fake_session(read: bool = False) -> Iterator[FlakySession]:
        session.modes.append(read)
        yield session

    monkeypatch.setattr(store, "session", fake_session)
    return store


def test_a_read_outlasts_three_lost_connections_within_the_budget(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """Three failures in a row were the cap of a call's own retries; a read, which no driver
    retry covers any more, tries again for as long as a fifth of the budget allows."""
    session = FlakySession(3, ServiceUnavailable("Failed to read from defunct connection"))
    store = flaky_store(monkeypatch, request, session)
    assert store.read("namespaces") == []
    assert session.runs == 4
    assert session.modes == [True] * 4  # every try in a read session: Neo4j refuses writes


def test_a_read_on_a_server_that_stays_away_ends_as_unavailable_within_the_budget(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    store = flaky_store(monkeypatch, request, FlakySession(10**6, ServiceUnavailable("refused")))
    monkeypatch.setattr(store, "timeout_s", 2.5)  # a fifth: 0.5 s of retries
    t = time.monotonic()
    with pytest.raises(Neo4jUnavailable):
        store.read("namespaces")
    assert time.monotonic() - t < 2.5


def test_a_statement_the_server_refuses_is_not_retried(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    syntax = Neo4jError._hydrate_neo4j(
        code="Neo.ClientError.Statement.SyntaxError", message="Invalid input 'MATC'"
    )
    session = FlakySession(1, syntax)
    store = flaky_store(monkeypatch, request, session)
    with pytest.raises(Exception, match="MATC"):
        store.read("namespaces")
    assert session.runs == 1
