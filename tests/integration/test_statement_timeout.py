"""Every statement and transaction the store runs carries a server-side timeout, set from the
client (so it holds on any Neo4j): a statement that would run for ever is ended by the real
server, with a one-line error naming the setting, and the store goes on answering."""

from __future__ import annotations

import time

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.store import GraphStore, StatementTimedOut
from terag_neo4j.store.connection import neo4j_errors

pytestmark = pytest.mark.integration

# Ten billion rows: hours of work for the server, so only the timeout ends it in seconds.
FOREVER = "UNWIND range(1, 10000000000) AS i WITH i WHERE i < 0 RETURN count(i) AS n"
TIMEOUT_S = 2.0


@pytest.fixture
def store(base_settings: Settings) -> GraphStore:
    settings = base_settings.model_copy(update={"neo4j_statement_timeout_s": TIMEOUT_S})
    return GraphStore.from_settings(settings)


def test_an_auto_commit_statement_that_runs_forever_is_ended(store: GraphStore) -> None:
    t0 = time.monotonic()
    with pytest.raises(StatementTimedOut, match="TERAG_NEO4J_STATEMENT_TIMEOUT_S") as info:
        store.call(lambda: _auto_commit(store))
    took = time.monotonic() - t0
    assert TIMEOUT_S <= took < TIMEOUT_S + 20, took
    assert "\n" not in str(info.value)
    assert store.read("namespaces") is not None  # the store still answers
    store.close()


def test_a_transaction_that_runs_forever_is_ended(store: GraphStore) -> None:
    t0 = time.monotonic()
    with pytest.raises(StatementTimedOut):
        store.write_tx(lambda tx: tx.run(FOREVER).consume())
    took = time.monotonic() - t0
    # The driver does not retry it as a transient failure: one timeout, not a round of them
    assert TIMEOUT_S <= took < TIMEOUT_S + 20, took
    with neo4j_errors(store.uri):
        assert store.write_tx(lambda tx: tx.run("RETURN 1 AS one").value()) == [1]
    store.close()


def _auto_commit(store: GraphStore) -> None:
    with store.session(read=True) as s:
        s.run(FOREVER).consume()
