"""The default walk runs on a projection with every leaf concept (named by one passage) folded
into its passage (`cypher/project_folded.cypher`). It must rank and score passages as the walk
on the whole undirected graph does: both converged, on the real GDS, from restart vectors that
start at leaf concepts, at concepts several passages name, and at passages."""

from __future__ import annotations

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.retrieval import pagerank
from terag_neo4j.store import gds

from .conftest import SAMPLE

pytestmark = pytest.mark.integration


def test_the_folded_walk_scores_passages_as_the_whole_graph_does(
    spacy_client: TeragClient,
) -> None:
    client = spacy_client
    client.index([SAMPLE], progress=False)
    ns = client.settings.namespace
    rc = client.settings.retrieval.model_copy(update={"tolerance": 1e-12, "max_iterations": 1000})
    spec = gds.projection_spec(rc)
    assert spec.folded and spec.code.endswith("f500")  # the default walk is folded

    concepts = client.store.session
    with concepts() as s:
        rows = s.run(
            "MATCH (c:Concept {namespace: $ns}) WHERE NOT c.type IN $skip "
            "RETURN id(c) AS node, c.frequency AS f ORDER BY c.uid",
            ns=ns,
            skip=spec.skip_types,
        ).data()
        passages = [
            r["node"]
            for r in s.run(
                "MATCH (p:Passage {namespace: $ns}) RETURN id(p) AS node ORDER BY p.uid", ns=ns
            )
        ]
    leaves = [r["node"] for r in rows if r["f"] == 1]
    shared = [r["node"] for r in rows if 1 < r["f"] <= rc.hub_cap]
    assert len(leaves) >= 3 and len(shared) >= 2, "the sample must have both kinds of concept"

    version = int(client.store.read("namespace_version", namespace=ns)[0]["version"])
    whole = f"terag_{ns}_utn_v{version}"  # unfolded: what the walk computed before folding
    folded = gds.graph_name(rc, ns, version)
    params = {"namespace": ns, "skip_types": spec.skip_types, "hub_cap": rc.hub_cap}
    try:
        client.store.read("project_undirected", graph=whole, rel_types=spec.rel_types, **params)
        gds.project(client.store, rc, ns, folded)
        sizes = {
            g["graphName"]: g["nodeCount"]
            for g in client.store.read("gds_graphs", prefix=f"terag_{ns}_")
        }
        # The fold leaves out every leaf and nothing else
        assert sizes[whole] - sizes[folded] == len(leaves)

        restarts = [
            [[leaves[0], 1.0]],  # a leaf alone: it restarts from its passage
            [[leaves[1], 0.7], [leaves[2], 0.2], [shared[0], 0.4], [passages[0], 0.05]],
            [[shared[1], 0.3], [passages[1], 0.1], [passages[2], 0.02]],
        ]
        walks: list[str] = []
        read = client.store.read

        def counted(name: str, **params: object) -> list[dict[str, object]]:
            walks.append(name)
            return read(name, **params)

        for sources in restarts:
            want = len(passages) + 3  # more than there are: every passage the walk reaches
            on_whole = pagerank.pagerank(client.store, rc, ns, whole, sources, want)
            client.store.read = counted  # type: ignore[method-assign]
            try:
                on_folded = pagerank.pagerank(
                    client.store, rc, ns, folded, sources, want, folded=True, leaves=set(leaves)
                )
            finally:
                client.store.read = read  # type: ignore[method-assign]
            # The window held every node: one walk, not one per widening
            assert walks.count("pagerank_folded") == 1
            walks.clear()
            assert [r["uid"] for r in on_folded] == [r["uid"] for r in on_whole], sources
            assert [r["score"] for r in on_folded] == pytest.approx(
                [r["score"] for r in on_whole], rel=1e-6, abs=1e-11
            )
            stats = pagerank.pagerank_stats(client.store, rc, ns, folded, sources, set(leaves))
            assert stats is not None and stats["ranIterations"] > 1
    finally:
        gds.drop(client.store, whole)
        gds.drop(client.store, folded)


def test_only_leaf_concepts_leave_the_restart_vector() -> None:
    sources = [[1, 0.5], [2, 0.25], [3, 0.125]]
    held, moved = pagerank.split_leaves(sources, {2, 9})
    assert held == [[1, 0.5], [3, 0.125]] and moved == [[2, 0.25]]
