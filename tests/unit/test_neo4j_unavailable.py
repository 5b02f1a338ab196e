"""Error handling against a port where no Neo4j listens (a real driver, no server, no fakes):
a call ends within the time budget with the project's own one-line error."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from terag_neo4j.config import Settings
from terag_neo4j.store import GraphStore, Neo4jUnavailable, driver_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def dead_uri() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"bolt://127.0.0.1:{port}"  # nothing listens once the socket is closed


def test_read_on_a_dead_server_fails_within_budget_with_one_line(dead_uri: str) -> None:
    settings = Settings(neo4j_timeout_s=30)
    driver = GraphDatabase.driver(dead_uri, auth=("neo4j", "x"), **driver_config(settings))
    store = GraphStore(driver, timeout_s=settings.neo4j_timeout_s, uri=dead_uri)
    t = time.monotonic()
    with pytest.raises(Neo4jUnavailable) as info:
        store.read("namespaces")
    elapsed = time.monotonic() - t
    store.close()
    assert elapsed <= 30, f"took {elapsed:.1f}s"
    message = str(info.value)
    assert "\n" not in message and dead_uri in message and "Connection refused" in message


def test_driver_config_fits_the_budget() -> None:
    conf = driver_config(Settings(neo4j_timeout_s=30))
    # The driver retries until max_transaction_retry_time after the first failure, then sleeps
    # once more (up to 2x with jitter): twice of it plus a connection attempt stays in budget.
    assert 2.4 * conf["max_transaction_retry_time"] + conf["connection_timeout"] <= 30
    assert conf["connection_acquisition_timeout"] > conf["connection_timeout"]
    assert conf["notifications_min_severity"] == "OFF"


def test_cli_on_a_dead_server_exits_3_with_one_line(dead_uri: str, tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "NEO4J_URI": dead_uri,
        "NEO4J_PASSWORD": "x",
        "TERAG_HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    t = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "terag_neo4j.cli", "stats", "-n", "x"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert time.monotonic() - t <= 30
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and dead_uri in lines[0], proc.stderr


def test_errors_of_a_stopping_server_count_as_unavailable() -> None:
    """Error classification only (no server): what a restart's shutdown sends is not a query
    fault, so the client reports the server unavailable rather than the query wrong. The class
    or the status code says so, not the words (tests/unit/test_error_classes.py has the rest)."""
    from neo4j.exceptions import ClientError, Neo4jError, ServiceUnavailable

    from terag_neo4j.store import stopping

    # what the queries caught by a stop of the local server raised, as Neo4j 2026.01 sent them
    lost = ServiceUnavailable("Failed to read from defunct connection IPv4Address(...)")
    not_serving = Neo4jError._hydrate_neo4j(
        code="Neo.TransientError.General.DatabaseUnavailable",
        message="Database 'neo4j' unavailable",
    )
    named = Neo4jError._hydrate_neo4j(
        code="Neo.ClientError.General.Unknown", message="This database is shutdown."
    )
    syntax = Neo4jError._hydrate_neo4j(
        code="Neo.ClientError.Statement.SyntaxError", message="Invalid input 'MATC'"
    )
    assert isinstance(named, ClientError) and isinstance(syntax, ClientError)
    assert stopping(lost) and stopping(not_serving)
    assert not stopping(ClientError()) and not stopping(named) and not stopping(syntax)
