"""Bad input is told before a connection fails: every command checks its arguments first, so
with Neo4j down (a closed port) or no service at --url, an empty question is reported as one
(exit 2), never as "cannot reach Neo4j" (exit 3). Real `terag` processes; nothing listens."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # released on close: nothing listens there


def terag(*argv: str) -> subprocess.CompletedProcess[str]:
    port = closed_port()
    env = {
        **os.environ,
        "NEO4J_URI": f"bolt://127.0.0.1:{port}",
        "TERAG_URL": "",
        "HF_HUB_OFFLINE": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "terag_neo4j.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["retrieve", ""], "the question is empty"),
        (["retrieve", "   "], "the question is empty"),
        (["ask", ""], "the question is empty"),
        (["retrieve", "", "--url", "http://127.0.0.1:9"], "the question is empty"),
        (["retrieve", "Who?", "-k", "0"], "--top-k must be at least 1"),
        (["retrieve", "Who?", "-n", "no such/ns"], "invalid namespace"),
        (["stats", "-n", "bad name"], "invalid namespace"),
        (["delete", "-n", "ok"], "give a DOCUMENT id, or --all"),
        (["index", "/no/such/path-for-terag"], "/no/such/path-for-terag"),
    ],
)
def test_bad_input_is_told_before_neo4j_is_reached(argv: list[str], says: str) -> None:
    r = terag(*argv)
    assert says in r.stderr, r.stderr
    assert "cannot reach" not in r.stderr, r.stderr
    assert r.returncode in (2, 4), (r.returncode, r.stderr)  # usage, or a path not found


def test_good_input_with_no_service_still_says_so() -> None:
    """The control: input that passes its checks meets the closed port."""
    r = terag("retrieve", "Who?", "--url", f"http://127.0.0.1:{closed_port()}")
    assert r.returncode == 3 and "cannot reach" in r.stderr, r.stderr


@pytest.mark.slow
def test_good_input_with_neo4j_down_still_says_so() -> None:
    """The control for Neo4j (its driver retries for a while before it gives up)."""
    r = terag("stats", "-n", "fine")
    assert r.returncode == 3 and "cannot reach Neo4j" in r.stderr, r.stderr
