"""Passage ids on the real Neo4j: a document whose id looks like another document's passage id
leaves that document whole, and a namespace written with the first id scheme is renamed by its
first write, after which re-indexing its documents changes nothing."""

from __future__ import annotations

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.core.passage_ids import SCHEME

pytestmark = pytest.mark.integration

LONG = "\n\n".join(
    f"Paragraph {i}: Volkswagen builds cars in Wolfsburg, and Porsche builds them in Stuttgart. "
    * 4
    for i in range(5)
)


def _passages(client: TeragClient, namespace: str) -> dict[str, str]:
    with client.store.session() as s:
        rows = s.run(
            "MATCH (p:Passage {namespace: $ns}) RETURN p.id AS id, p.doc_id AS doc, p.uid AS uid",
            ns=namespace,
        ).data()
    for r in rows:
        assert r["uid"] == f"{namespace}|{r['id']}"
    return {r["id"]: r["doc"] for r in rows}


def test_a_document_named_like_a_passage_takes_nothing_from_its_owner(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace, chunk_tokens=64, chunk_overlap=0) as c:
        c.index([Document(id="x", title="", text=LONG)], progress=False)
        before = {p: d for p, d in _passages(c, namespace).items()}
        assert len(before) >= 3 and set(before.values()) == {"x"} and "x#1" in before
        c.index([Document(id="x#1", title="", text="Munich has a town hall.")], progress=False)
        after = _passages(c, namespace)
        assert {p: d for p, d in after.items() if d == "x"} == before
        assert [p for p, d in after.items() if d == "x#1"] == ["x%231"]
        assert c.delete("x#1") == 1
        assert _passages(c, namespace) == before


def test_a_namespace_of_the_first_scheme_is_renamed_by_its_first_write(
    base_settings: Settings, namespace: str
) -> None:
    docs = [
        Document(id="a#b", title="", text=LONG),
        Document(id="c%d", title="", text="Munich has a town hall with a Glockenspiel."),
        Document(id="plain", title="", text="Bremen has a town musicians' statue."),
    ]
    with TeragClient(base_settings, namespace=namespace, chunk_tokens=64, chunk_overlap=0) as c:
        c.index(docs, progress=False)
        current = _passages(c, namespace)
        with c.store.session() as s:  # what the first scheme wrote: document ids spliced raw
            s.run(
                "MATCH (p:Passage {namespace: $ns}) WHERE p.doc_id IN ['a#b', 'c%d'] "
                "WITH p, CASE WHEN p.doc_id = 'c%d' THEN p.doc_id "
                "ELSE p.doc_id + '#' + toString(p.position) END AS old "
                "SET p.id = old, p.uid = $ns + '|' + old",
                ns=namespace,
            ).consume()
            s.run("MATCH (n:Namespace {name: $ns}) REMOVE n.passage_ids", ns=namespace).consume()
        old = _passages(c, namespace)
        assert "c%d" in old and "a#b#0" in old and old != current
        # A read serves the ids as they are; the first write renames them
        assert c.retrieve("Where is the Glockenspiel?").passages
        assert _passages(c, namespace) == old
        c.index([Document(id="other", title="", text="Hamburg has a harbour.")], progress=False)
        migrated = _passages(c, namespace)
        assert {p: d for p, d in migrated.items() if d != "other"} == current
        with c.store.session() as s:
            scheme = s.run(
                "MATCH (n:Namespace {name: $ns}) RETURN n.passage_ids AS v", ns=namespace
            ).single()
        assert scheme is not None and scheme["v"] == SCHEME
        report = c.index(docs, progress=False)
        assert report.passages_unchanged == report.passages_total == len(current)
