"""A client keeps working through a restart of its Neo4j: while the server is down each call
fails within the time budget with the project's own one-line error, and the same client
answers again once the server is back (no stale connections, no stale GDS projection)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.indexing.documents import Document
from terag_neo4j.local import neo4j as local
from terag_neo4j.store import Neo4jUnavailable
from tests.fixtures.neo4j import Neo4jConn

pytestmark = [pytest.mark.integration, pytest.mark.faults]

SAMPLE = Path(__file__).resolve().parents[2] / "terag_neo4j" / "data" / "sample"
QUESTION = "Which city is the headquarters of Volkswagen?"
BUDGET_S = 30.0


@dataclass
class Call:
    started: float
    seconds: float
    ids: list[str] | None
    error: BaseException | None


def _wait_for(cond: object, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")
        time.sleep(0.2)


def test_retrieval_loop_survives_a_neo4j_restart(
    neo4j_conn: Neo4jConn, base_settings: Settings, namespace: str
) -> None:
    if neo4j_conn.source != "local":
        pytest.skip("needs the local server manager to stop and start the test Neo4j")
    server = Settings()  # the local server the session fixture started (TERAG_HOME, ports)
    calls: list[Call] = []
    done = threading.Event()

    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([SAMPLE], progress=False)
        baseline = [p.id for p in client.retrieve(QUESTION).passages]
        assert baseline

        def loop() -> None:
            while not done.is_set():
                t = time.monotonic()
                try:
                    ids = [p.id for p in client.retrieve(QUESTION).passages]
                    calls.append(Call(t, time.monotonic() - t, ids, None))
                except Exception as e:
                    calls.append(Call(t, time.monotonic() - t, None, e))
                time.sleep(0.2)

        worker = threading.Thread(target=loop, daemon=True)
        worker.start()
        try:
            _wait_for(lambda: any(c.ids for c in calls), 60, "a retrieval before the stop")
            assert local.stop(server), "the test Neo4j was not running"
            stopped = time.monotonic()
            _wait_for(
                lambda: sum(c.error is not None for c in calls) >= 2, 3 * BUDGET_S, "two failures"
            )
            t = time.monotonic()
            with pytest.raises(Neo4jUnavailable) as down:  # indexing while down: the same error
                client.index([Document(id="late", text="Hanover is in Lower Saxony.")])
            index_s = time.monotonic() - t
            assert index_s <= BUDGET_S and "\n" not in str(down.value)
            local.start(server)
            up = time.monotonic()
            _wait_for(
                lambda: any(c.ids and c.started >= up for c in calls), 2 * BUDGET_S, "recovery"
            )
        finally:
            done.set()
            worker.join(3 * BUDGET_S)
            if not local.status(server).running:
                local.start(server)  # leave the session's server running for the next tests

    failures = [c for c in calls if c.error is not None]
    assert failures, "no call failed while Neo4j was down"
    for c in failures:
        assert isinstance(c.error, Neo4jUnavailable), repr(c.error)
        message = str(c.error)
        assert "\n" not in message and "terag server status" in message
        assert c.seconds <= BUDGET_S, f"a failing call took {c.seconds:.1f}s"
    assert all(c.seconds <= BUDGET_S for c in calls)
    recovered = [c for c in calls if c.ids is not None and c.started >= up]
    # The same passages in the same order: the namespace's search indexes are its own (other
    # tests' namespaces, deleted or merged, do not enter its scores) and ties go by uid.
    assert recovered and recovered[0].ids == baseline
    first_back = recovered[0].started + recovered[0].seconds - up
    print(
        f"\nfailing calls: {len(failures)}, longest {max(c.seconds for c in failures):.1f}s, "
        f"first failure {min(c.started + c.seconds for c in failures) - stopped:.1f}s after the "
        f"stop; first success {first_back:.1f}s after the server was up again; index while down "
        f"failed in {index_s:.1f}s; failures "
        f"(start after stop, seconds): {[(round(c.started - stopped, 1), round(c.seconds, 1)) for c in failures]}"
    )
