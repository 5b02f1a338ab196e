"""What the read path writes (lazy CO_OCCURRENCE pairs, lazy concept embeddings) against a Neo4j
that refuses writes, and the pair key's uniqueness constraint on a database that earlier
versions left with duplicate pairs.

Neo4j Community has no users with fewer privileges (no RBAC), so a refused write is made the
way the server refuses it to a read transaction: `Neo.ClientError.Statement.AccessMode`, one
of the codes it answers a read-only user (`Security.Forbidden`) or database with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest
from neo4j import ManagedTransaction

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.store import GraphStore, GraphStoreError

from .conftest import SAMPLE

pytestmark = pytest.mark.integration
T = TypeVar("T")
QUESTION = "Where is Volkswagen based?"
MAX_PAIRS = 200_000  # the constraint test drops and remakes a database-wide constraint


def refuse_writes(monkeypatch: pytest.MonkeyPatch, store: GraphStore) -> None:
    """Every write transaction of `store` runs as a read transaction: the server refuses it."""

    def write_tx(fn: Callable[[ManagedTransaction], T]) -> T:
        def run() -> T:
            with store.session() as s:
                return s.execute_read(fn)  # type: ignore[arg-type]

        return store.call(run)

    monkeypatch.setattr(store, "write_tx", write_tx)


def test_a_reader_that_may_not_write_pairs_gets_one_line_saying_how_to_build_them(
    base_settings: Settings, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with TeragClient(base_settings, namespace=namespace) as writer:
        writer.index([SAMPLE], progress=False)
        assert writer.stats().cooccurrence == "lazy"
    with TeragClient(base_settings, namespace=namespace, preset="paper") as reader:
        refuse_writes(monkeypatch, reader.store)
        with pytest.raises(GraphStoreError) as refused:
            reader.retrieve(QUESTION)
        message = str(refused.value)
        assert "\n" not in message and len(message) < 400
        assert "CO_OCCURRENCE" in message and "--cooccurrence eager" in message
        assert f"--namespace {namespace}" in message
        monkeypatch.undo()
        assert reader.stats().cooccurrence == "lazy" and reader.stats().co_occurrence == 0

        # The remedy the message names works, after which the same reader needs no writes.
        with TeragClient(base_settings, namespace=namespace, cooccurrence="eager") as fixer:
            fixer.index([SAMPLE], progress=False)
        refuse_writes(monkeypatch, reader.store)
        assert reader.retrieve(QUESTION).passages


def test_a_reader_that_may_not_write_concept_embeddings_gets_one_line_saying_how(
    base_settings: Settings, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = [Document(id="vw", title="Volkswagen", text="Volkswagen is based in Wolfsburg.")]
    with TeragClient(base_settings, namespace=namespace, cooccurrence="eager") as writer:
        writer.index(docs, progress=False)
    # ner linking with a name no concept has exactly: semantic matching needs the embeddings.
    with TeragClient(base_settings, namespace=namespace, preset="paper") as reader:
        refuse_writes(monkeypatch, reader.store)
        with pytest.raises(GraphStoreError) as refused:
            reader.retrieve("Where is VW Group based?", entities=["VW Group"])
        message = str(refused.value)
        assert "\n" not in message and "TERAG_CONCEPT_VECTORS=eager" in message
        monkeypatch.undo()
        with TeragClient(base_settings, namespace=namespace, concept_vectors="eager") as fixer:
            fixer.index(docs, progress=False)  # writes the embeddings the namespace lacks
        refuse_writes(monkeypatch, reader.store)
        result = reader.retrieve("Where is VW Group based?", entities=["VW Group"])
        assert [p.id for p in result.passages] == ["vw"]


def _pair_constraint(store: GraphStore) -> list[str]:
    with store.session() as s:
        return [
            r["name"]
            for r in s.run(
                "SHOW CONSTRAINTS YIELD name, entityType, labelsOrTypes, properties "
                "WHERE entityType = 'RELATIONSHIP' AND labelsOrTypes = ['CO_OCCURRENCE'] "
                "AND properties = ['pair'] RETURN name"
            )
        ]


def test_schema_resets_namespaces_with_duplicate_pairs_so_the_pair_key_is_unique(
    base_settings: Settings, namespace: str
) -> None:
    """A database where concurrent lazy builds of an earlier version left a pair with two edges:
    `ensure_schema` cannot make the pair key unique until that namespace's pairs are rebuilt."""
    eager_ns = f"{namespace}-eager"
    with (
        TeragClient(base_settings, namespace=namespace, cooccurrence="eager") as client,
        TeragClient(base_settings, namespace=eager_ns, cooccurrence="eager") as eager,
    ):
        client.index([SAMPLE], progress=False)
        eager.index([SAMPLE], progress=False)
        store = client.store
        assert _pair_constraint(store) == ["terag_cooccurrence_pair_unique"]
        with store.session() as s:
            edges = s.run("MATCH ()-[r:CO_OCCURRENCE]->() RETURN count(r) AS n").single()
        if edges is not None and edges["n"] > MAX_PAIRS:
            pytest.skip(
                f"the database holds {edges['n']:,} pairs: making the key unique again over "
                "them all would take minutes"
            )
        try:
            with store.session() as s:
                s.run("DROP CONSTRAINT terag_cooccurrence_pair_unique").consume()
                s.run(
                    "CREATE INDEX terag_cooccurrence_pair IF NOT EXISTS "
                    "FOR ()-[r:CO_OCCURRENCE]-() ON (r.pair)"
                ).consume()
                s.run("CALL db.awaitIndexes(300)").consume()
                dup = s.run(
                    "MATCH (a:Concept {namespace: $ns})-[r:CO_OCCURRENCE]->(b) "
                    "WITH a, r, b LIMIT 1 CREATE (a)-[:CO_OCCURRENCE {pair: r.pair, count: 1}]->(b) "
                    "RETURN count(*) AS n",
                    ns=namespace,
                ).single()
            assert dup is not None and dup["n"] == 1
            version = client.stats().version
            store.ensure_schema()
        finally:
            store.ensure_schema()  # leave the constraint in place for the other tests
        assert _pair_constraint(store) == ["terag_cooccurrence_pair_unique"]
        info = client.stats()
        assert (info.cooccurrence, info.co_occurrence) == ("lazy", 0)
        assert info.version > version  # no projection of the damaged pairs is used again
        with TeragClient(base_settings, namespace=namespace, preset="paper") as paper:
            assert paper.retrieve(QUESTION).passages
        assert client.stats().cooccurrence == "kept"
        with store.session() as s:
            rows = s.run(
                "MATCH (a:Concept {namespace: $ns})-[r:CO_OCCURRENCE]->(b) "
                "RETURN a.key AS a, b.key AS b, r.count AS n ORDER BY a, b",
                ns=namespace,
            ).data()
            want = s.run(
                "MATCH (a:Concept {namespace: $ns})-[r:CO_OCCURRENCE]->(b) "
                "RETURN a.key AS a, b.key AS b, r.count AS n ORDER BY a, b",
                ns=eager_ns,
            ).data()
        assert rows == want and rows
