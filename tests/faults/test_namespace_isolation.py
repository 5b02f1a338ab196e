"""One namespace's results never depend on another's: namespace A's top passages and their
scores stay the same to 1e-6 while namespace B is indexed with text on A's very subject, after B
is dropped, and after Neo4j restarts; B's search indexes go with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j import Driver

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.local import neo4j as local
from terag_neo4j.store.ids import text_index, vector_index
from tests.fixtures.neo4j import Neo4jConn

pytestmark = [pytest.mark.integration, pytest.mark.faults]

SAMPLE = Path(__file__).resolve().parents[2] / "terag_neo4j" / "data" / "sample"
QUESTIONS = [
    "Which city is the headquarters of Volkswagen?",
    "Who founded the Porsche engineering office?",
    "Where was the last original Volkswagen Beetle built?",
    "What is the capital of Lower Saxony?",
    "Which state is Stuttgart in?",
    "When was Wolfsburg founded and why?",
    "Where is Osnabrück?",
    "Who designed the Beetle?",
]
Ranking = list[tuple[str, float]]


def _other_corpus(n: int = 300) -> list[Document]:
    """Text on A's own subject, so that shared BM25 statistics (document frequencies, average
    lengths) or a shared vector graph would move A's scores."""
    words = ["Volkswagen", "Wolfsburg", "Porsche", "Beetle", "Stuttgart", "Lower Saxony"]
    return [
        Document(
            id=f"b{i}",
            title=f"{words[i % 6]} note {i}",
            text=(
                f"{words[i % 6]} and {words[(i + 1) % 6]} appear in record {i}. The headquarters "
                f"of the {words[(i + 2) % 6]} works council met in {words[(i + 3) % 6]} in "
                f"{1900 + i}, where the Beetle and the Porsche office were discussed again."
            ),
        )
        for i in range(n)
    ]


def _rankings(client: TeragClient) -> list[Ranking]:
    return [[(p.id, p.score) for p in client.retrieve(q, top_k=10).passages] for q in QUESTIONS]


def _assert_same(before: list[Ranking], after: list[Ranking], when: str) -> None:
    for q, b, a in zip(QUESTIONS, before, after, strict=True):
        assert [pid for pid, _ in a] == [pid for pid, _ in b], f"{when}: {q}"
        for (_, sb), (_, sa) in zip(b, a, strict=True):
            assert sa == pytest.approx(sb, abs=1e-6), f"{when}: {q}"


def _indexes(driver: Driver, database: str) -> set[str]:
    with driver.session(database=database) as s:
        return set(s.run("SHOW INDEXES YIELD name RETURN name").value())


def test_a_namespace_ranks_the_same_whatever_another_holds_deletes_or_a_restart_does(
    neo4j_conn: Neo4jConn, neo4j_driver: Driver, base_settings: Settings, namespace: str
) -> None:
    if neo4j_conn.source != "local":
        pytest.skip("needs the local server manager to restart the test Neo4j")
    other = f"{namespace}b"
    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([SAMPLE], progress=False)
        before = _rankings(client)
        assert all(before), "every question retrieves passages"
        assert {text_index(namespace), vector_index(namespace)} <= _indexes(
            neo4j_driver, neo4j_conn.database
        )

        client.index(_other_corpus(), namespace=other, progress=False)
        _assert_same(before, _rankings(client), "after another namespace was indexed")

        # Half of B deleted: Lucene keeps deleted documents in its statistics until a merge.
        for i in range(0, 300, 2):
            client.delete(f"b{i}", namespace=other)
        _assert_same(before, _rankings(client), "after another namespace's deletes")

        client.drop(other)
        assert not {text_index(other), vector_index(other)} & _indexes(
            neo4j_driver, neo4j_conn.database
        ), "a dropped namespace's indexes go with it"
        _assert_same(before, _rankings(client), "after another namespace was dropped")

    server = Settings()  # the local server the session fixture started (TERAG_HOME, ports)
    assert local.stop(server), "the test Neo4j was not running"
    local.start(server)
    with TeragClient(base_settings, namespace=namespace) as client:  # a new process's view
        _assert_same(before, _rankings(client), "after a restart")
