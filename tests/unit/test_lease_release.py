"""Error handling of `held_lease` (a unit test with a stand-in store, named as such): giving the
lease back after the ingest's writes are committed never fails the ingest."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from neo4j.exceptions import Neo4jError

from terag_neo4j.indexing.lease import held_lease


class _Namespaces:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def ingest_lease(self, namespace: str, seconds: float, run_id: str = "manual") -> None:
        self.calls.append(seconds)
        if seconds == 0:  # the release
            # as the driver raises a server's error (its class follows from the code)
            raise Neo4jError._hydrate_neo4j(
                code="Neo.ClientError.Statement.EntityNotFound",
                message="Node with id 1 has been deleted in this transaction",
            )


class _Store:
    def __init__(self) -> None:
        self.namespaces = _Namespaces()


def test_a_failed_release_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    store: Any = _Store()
    body_ran = False
    caplog.set_level(logging.WARNING, logger="terag_neo4j.indexing.lease")
    with held_lease(store, "ns", "run-1", renew_s=60):
        body_ran = True
    assert body_ran
    assert store.namespaces.calls == [120, 0]  # taken, then given back once
    assert any("could not give back the ingest lease of ns" in r.message for r in caplog.records)


def test_an_error_of_the_ingest_itself_still_raises() -> None:
    store: Any = _Store()
    with (
        pytest.raises(RuntimeError, match="the ingest failed"),
        held_lease(store, "ns", "run-1", renew_s=60),
    ):
        raise RuntimeError("the ingest failed")


class _FlakyRenewals(_Namespaces):
    """Every renewal fails with a server error; taking and giving back succeed."""

    def ingest_lease(self, namespace: str, seconds: float, run_id: str = "manual") -> None:
        self.calls.append(seconds)
        if seconds and len(self.calls) > 1:
            raise Neo4jError._hydrate_neo4j(
                code="Neo.TransientError.Transaction.DeadlockDetected", message="deadlock"
            )


def test_a_failed_renewal_keeps_the_heartbeat_beating(caplog: pytest.LogCaptureFixture) -> None:
    store: Any = _Store()
    store.namespaces = _FlakyRenewals()
    caplog.set_level(logging.WARNING, logger="terag_neo4j.indexing.lease")
    with held_lease(store, "ns", "run-1", renew_s=0.01):
        deadline = time.monotonic() + 5
        while store.namespaces.calls.count(120) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
    # A heartbeat that died on the first failure would have renewed once, not three times
    assert store.namespaces.calls.count(120) >= 4
    assert store.namespaces.calls[-1] == 0
    assert any("could not renew the ingest lease of ns" in r.message for r in caplog.records)
