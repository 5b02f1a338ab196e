"""The `walk_adjacent` knob: the projection links each passage to the next one of its document,
as `cypher/project_undirected.cypher` and `project_directed.cypher` build it, and no passage
of another document or of a one-passage document."""

from __future__ import annotations

import itertools
import threading
import uuid

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.core.documents import Document
from terag_neo4j.retrieval import walk
from terag_neo4j.retrieval.presets import RetrievalConfig
from terag_neo4j.store import gds

pytestmark = pytest.mark.integration

SECTION = "The keeper of lighthouse {n} rowed out to the reef at dawn and counted the gulls. "


def _book() -> Document:
    text = "\n\n".join(f"# Watch {n}\n\n" + SECTION.format(n=n) * 40 for n in range(3))
    return Document(id="logbook", title="Logbook", text=text)


def _book_passages(client: TeragClient, value: str) -> list[int]:
    """`value` (a Cypher expression of `p`) of the book's passages, in document order."""
    with client.store.session() as s:
        values: list[int] = s.run(
            "MATCH (p:Passage {namespace: $ns, doc_id: 'logbook'}) "
            f"RETURN {value} AS v ORDER BY p.position",
            ns=client.settings.namespace,
        ).value()
    assert len(values) >= 3, "the book must span several passages"
    return values


@pytest.mark.parametrize("orientation", ["undirected", "directed"])
def test_adjacent_passages_are_linked_in_document_order(
    spacy_client: TeragClient, orientation: str
) -> None:
    note = Document(id="note", title="Note", text="Gulls nest on the reef in spring.")
    spacy_client.index([_book(), note], progress=False)
    store, ns = spacy_client.store, spacy_client.settings.namespace
    positions = _book_passages(spacy_client, "p.position")
    want = set(itertools.pairwise(positions))
    want |= {(b, a) for a, b in want}  # undirected: both ways; directed: built both ways

    counts = {}
    for adjacent in (False, True):
        rc = RetrievalConfig(walk="global", orientation=orientation, walk_adjacent=adjacent)
        name = f"terag_{ns}_adj{uuid.uuid4().hex[:6]}"
        gds.project(store, rc, ns, name)
        try:
            [row] = [r for r in store.read("gds_graphs", prefix=name) if r["graphName"] == name]
            counts[adjacent] = int(row["relationshipCount"])
            with store.session() as s:
                pairs = (
                    s.run(
                        "CALL gds.graph.relationships.stream($g, ['NEXT']) "
                        "YIELD sourceNodeId, targetNodeId "
                        "WITH gds.util.asNode(sourceNodeId) AS a, gds.util.asNode(targetNodeId) AS b "
                        "RETURN a.doc_id AS da, a.position AS pa, b.doc_id AS db, b.position AS pb",
                        g=name,
                    ).data()
                    if adjacent
                    else []
                )
        finally:
            gds.drop(store, name)
        if adjacent:
            assert {(r["da"], r["db"]) for r in pairs} == {("logbook", "logbook")}
            assert {(r["pa"], r["pb"]) for r in pairs} == want
    assert counts[True] - counts[False] == len(want)


def test_a_local_walk_links_the_passages_near_the_question_to_their_neighbours(
    spacy_client: TeragClient,
) -> None:
    """Seeded on the book's middle passage alone, the local graph gains exactly the two links
    to the passages before and after it (GDS counts an undirected link twice)."""
    spacy_client.index([_book()], progress=False)
    store, ns = spacy_client.store, spacy_client.settings.namespace
    nodes = _book_passages(spacy_client, "id(p)")
    middle = [[nodes[1], 1.0]]
    counts, ranked = {}, {}
    for adjacent in (False, True):
        rc = RetrievalConfig(walk="local", walk_adjacent=adjacent)
        rows, info = walk.local_pagerank(store, rc, ns, middle, [], middle, 10)
        counts[adjacent] = info.relationships
        ranked[adjacent] = {r["node"] for r in rows}
    assert counts[True] - counts[False] == 4
    assert {nodes[0], nodes[2]} <= ranked[True]


def test_an_adjacent_walks_projection_is_dropped_with_its_namespace_and_evictable(
    spacy_client: TeragClient,
) -> None:
    """The namespace's projection with adjacent links (flag `a`) is one eviction may drop and
    the namespace's drop removes, on the real GDS catalog."""
    spacy_client.index([_book()], progress=False)
    store, ns = spacy_client.store, spacy_client.settings.namespace
    rc = RetrievalConfig(walk="global", walk_adjacent=True)
    name, _ = gds.ensure_projection(store, rc, ns, threading.Lock())
    assert "a" in gds.walk(rc).code and name.startswith(f"terag_{ns}_")
    evictable = {
        g["graphName"] for g in gds.catalog(store) if gds._PROJECTION.fullmatch(g["graphName"])
    }
    assert name in evictable
    assert gds.projections(store, ns) == {name}
    assert [p["graph"] for p in store.projections_in_memory(ns)] == [name]
    gds.drop_projections(store, ns)
    assert name not in {g["graphName"] for g in gds.catalog(store)}
