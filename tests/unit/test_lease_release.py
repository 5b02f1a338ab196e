"""Error handling of `held_lease` (a unit test with a stand-in store, named as such): giving the
lease back after the ingest's writes are committed never fails the ingest."""

from __future__ import annotations

import logging
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
