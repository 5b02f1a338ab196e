"""A namespace's GDS projection holds that namespace and nothing else, as the project builds it:
`gds.project` with `cypher/project_undirected.cypher` and `project_directed.cypher`,
not a projection Cypher written for the test.

The other namespace holds the same documents (so the same concept keys and passage ids, told
apart only by the namespace), more of them, its pairs and SYNONYM edges; the projection of the
first must not change when it arrives, and must count exactly the first one's nodes and edges.
"""

from __future__ import annotations

import uuid

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.store import GraphStore, gds

from .conftest import SAMPLE

pytestmark = pytest.mark.integration

# Every relationship type and concept type the walk can read, no hub cap: nothing is filtered out
# but what belongs to another namespace.
WALKS = {
    orientation: RetrievalConfig(
        walk="global",
        orientation=orientation,
        hub_cap=0,
        walk_cooccurrence=True,
        walk_titles=True,
    )
    for orientation in ("undirected", "directed")
}


def graph_facts(
    store: GraphStore, graph: str
) -> tuple[int, int, set[str], list[tuple[str, float]]]:
    """(nodes, relationships, namespaces of its nodes, PageRank from the first concept)."""
    rows = store.read("gds_graphs", prefix=graph)  # the catalog's counts, as eviction reads them
    [row] = [r for r in rows if r["graphName"] == graph]
    with store.session() as s:
        namespaces = set(
            s.run(
                "CALL gds.degree.stream($g) YIELD nodeId "
                "RETURN DISTINCT gds.util.asNode(nodeId).namespace AS ns",
                g=graph,
            ).value()
        )
        ranks = s.run(
            "MATCH (c:Concept {namespace: $ns}) WITH c ORDER BY c.key LIMIT 1 "
            "CALL gds.pageRank.stream($g, {sourceNodes: [c], maxIterations: 50}) "
            "YIELD nodeId, score "
            "WITH gds.util.asNode(nodeId) AS n, score WHERE n:Passage "
            "RETURN n.id AS id, round(score, 9) AS score ORDER BY score DESC, id LIMIT 5",
            g=graph,
            ns=next(iter(namespaces)) if len(namespaces) == 1 else "",
        ).values()
    return int(row["nodeCount"]), int(row["relationshipCount"]), namespaces, ranks


def expected_counts(store: GraphStore, namespace: str, directed: bool) -> tuple[int, int]:
    """The namespace's nodes and the relationships its projection must hold, counted here:
    HAS_PASSAGE once, concept-concept edges both ways (directed: read from both ends; undirected:
    GDS counts every undirected relationship twice)."""
    with store.session() as s:
        rec = s.run(
            "CALL () { MATCH (p:Passage {namespace: $ns}) RETURN count(p) AS passages } "
            "CALL () { MATCH (c:Concept {namespace: $ns}) RETURN count(c) AS concepts } "
            "CALL () { MATCH (:Concept {namespace: $ns})-[r:HAS_PASSAGE]->() "
            "          RETURN count(r) AS has_passage } "
            "CALL () { MATCH (:Concept {namespace: $ns})-[r:CO_OCCURRENCE]->() "
            "          RETURN count(r) AS between } "
            "RETURN passages, concepts, has_passage, between",
            ns=namespace,
        ).single(strict=True)
    nodes = rec["passages"] + rec["concepts"]
    hp, between = rec["has_passage"], rec["between"]
    return nodes, (hp + 2 * between if directed else 2 * (hp + between))


def test_a_projection_holds_its_namespace_only(base_settings: Settings, namespace: str) -> None:
    other = f"{namespace}-other"
    settings = base_settings.with_overrides(cooccurrence="eager", synonym_threshold=0.8)
    with TeragClient(settings, namespace=namespace) as a:
        a.index([SAMPLE], progress=False)
        store = a.store
        before = {}
        for orientation, rc in WALKS.items():
            name = f"terag_{namespace}_iso{uuid.uuid4().hex[:6]}"
            gds.project(store, rc, namespace, name)
            try:
                before[orientation] = graph_facts(store, name)
            finally:
                gds.drop(store, name)
            nodes, rels, namespaces, ranks = before[orientation]
            assert namespaces == {namespace} and ranks
            assert (nodes, rels) == expected_counts(store, namespace, orientation == "directed")

        with TeragClient(settings, namespace=other) as b:
            extra = Document(
                id="vw-extra",
                title="Volkswagen Group",
                text="Volkswagen is based in Wolfsburg, Lower Saxony, like the Porsche family.",
            )
            b.index([SAMPLE, extra], progress=False)
            info = b.stats()
            assert info.co_occurrence > 0 and info.passages == 9

        for orientation, rc in WALKS.items():
            name = f"terag_{namespace}_iso{uuid.uuid4().hex[:6]}"
            gds.project(store, rc, namespace, name)
            try:
                # The same nodes, edges and walk as before the other namespace arrived.
                assert graph_facts(store, name) == before[orientation], orientation
            finally:
                gds.drop(store, name)
