"""Neo4j + GDS smoke tests: the pinned GDS answers, and personalised PageRank with weighted
sourceNodes computes exactly what an independent numpy power iteration computes.

GDS PageRank (checked here, not assumed): scores are not normalised to sum 1, the teleport term of
node i is (1 - d) * bias_i with the biases used as given (not normalised), and a dangling node's
score is not redistributed (its mass leaks):

    x_i = (1 - d) * b_i + d * sum_{j -> i} x_j / outdeg(j)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import pytest
from neo4j import Driver

from terag_neo4j.local import neo4j as local
from tests.fixtures.neo4j import Neo4jConn

pytestmark = pytest.mark.integration

DAMPING = 0.85
# A small directed graph: a cycle a->b->c->a with a branch to a chain, a hub, and a dangling node.
NODES = ["a", "b", "c", "d", "e", "f", "g"]
EDGES = [
    ("a", "b"),
    ("b", "c"),
    ("c", "a"),
    ("c", "d"),
    ("d", "e"),
    ("e", "f"),
    ("f", "d"),
    ("b", "g"),
    ("e", "g"),
    ("a", "e"),
]  # g has no out-edges


def numpy_ppr(bias: Mapping[str, float], damping: float = DAMPING) -> dict[str, float]:
    idx = {k: i for i, k in enumerate(NODES)}
    n = len(NODES)
    out_deg = np.zeros(n)
    for s, _ in EDGES:
        out_deg[idx[s]] += 1
    m = np.zeros((n, n))  # m[i, j] = 1/outdeg(j) for j -> i; dangling columns stay 0
    for s, t in EDGES:
        m[idx[t], idx[s]] += 1.0 / out_deg[idx[s]]
    b = np.array([bias.get(k, 0.0) for k in NODES])
    x = (1 - damping) * b
    for _ in range(10_000):
        nxt = (1 - damping) * b + damping * (m @ x)
        if np.max(np.abs(nxt - x)) < 1e-14:
            x = nxt
            break
        x = nxt
    return {k: float(x[idx[k]]) for k in NODES}


PROJECT = (
    "MATCH (s:SmokeNode {namespace: $ns}) "
    "OPTIONAL MATCH (s)-[:SMOKE_LINK]->(t:SmokeNode {namespace: $ns}) "
    "WITH gds.graph.project($g, s, t) AS g RETURN g.nodeCount AS n, g.relationshipCount AS r"
)


def project(driver: Driver, database: str, namespace: str, name: str) -> tuple[int, int]:
    """This test's own projection of the hand-built graph (the project's projections, and that
    they hold their namespace only, are tested in test_projection_isolation.py)."""
    with driver.session(database=database) as s:
        rec = s.run(PROJECT, ns=namespace, g=name).single(strict=True)
    return rec["n"], rec["r"]


@pytest.fixture()
def graph(neo4j_driver: Driver, neo4j_conn: Neo4jConn, namespace: str) -> Iterator[str]:
    """The hand-built graph under this test's namespace, projected into GDS."""
    name = f"smoke_{namespace}"
    with neo4j_driver.session(database=neo4j_conn.database) as s:
        s.run(
            "UNWIND $keys AS k CREATE (:SmokeNode {namespace: $ns, key: k})",
            keys=NODES,
            ns=namespace,
        ).consume()
        s.run(
            "UNWIND $edges AS e "
            "MATCH (a:SmokeNode {namespace: $ns, key: e[0]}), "
            "      (b:SmokeNode {namespace: $ns, key: e[1]}) "
            "CREATE (a)-[:SMOKE_LINK]->(b)",
            edges=[list(e) for e in EDGES],
            ns=namespace,
        ).consume()
    assert project(neo4j_driver, neo4j_conn.database, namespace, name) == (len(NODES), len(EDGES))
    try:
        yield name
    finally:
        with neo4j_driver.session(database=neo4j_conn.database) as s:
            s.run(
                "CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName", g=name
            ).consume()


def gds_ppr(
    driver: Driver, database: str, graph: str, namespace: str, bias: Mapping[str, float]
) -> dict[str, float]:
    with driver.session(database=database) as s:
        rows = s.run(
            "UNWIND $bias AS pair "
            "MATCH (n:SmokeNode {namespace: $ns, key: pair[0]}) "
            "WITH collect([n, pair[1]]) AS sources "
            "CALL gds.pageRank.stream($g, {sourceNodes: sources, dampingFactor: $d, "
            "                             maxIterations: 1000, tolerance: 1e-12}) "
            "YIELD nodeId, score "
            "RETURN gds.util.asNode(nodeId).key AS key, score",
            bias=[[k, v] for k, v in bias.items()],
            ns=namespace,
            g=graph,
            d=DAMPING,
        )
        return {r["key"]: r["score"] for r in rows}


def ranking(scores: Mapping[str, float]) -> list[str]:
    return sorted(scores, key=lambda k: (-scores[k], k))


def test_gds_version_is_the_pinned_one(neo4j_driver: Driver, neo4j_conn: Neo4jConn) -> None:
    pins = local.load_pins()
    with neo4j_driver.session(database=neo4j_conn.database) as s:
        version = s.run("RETURN gds.version() AS v").single(strict=True)["v"]
    assert local.version_tuple(version)[:2] >= local.MIN_GDS
    if neo4j_conn.source == "local":
        assert version == pins.gds
    else:
        # The Docker image installs the GDS release matching its Neo4j; same minor as the pin.
        assert local.version_tuple(version)[:2] == local.version_tuple(pins.gds)[:2]


@pytest.mark.parametrize(
    "bias",
    [{"a": 1.0}, {"a": 0.3, "g": 0.7}, {"d": 2.0, "b": 5.0, "f": 0.5}],
    ids=["single", "two-weighted", "unnormalised"],
)
def test_personalised_pagerank_matches_numpy(
    neo4j_driver: Driver,
    neo4j_conn: Neo4jConn,
    namespace: str,
    graph: str,
    bias: dict[str, float],
) -> None:
    got = gds_ppr(neo4j_driver, neo4j_conn.database, graph, namespace, bias)
    want = numpy_ppr(bias)
    assert set(got) == set(NODES)
    np.testing.assert_allclose(
        [got[k] for k in NODES], [want[k] for k in NODES], rtol=1e-6, atol=1e-9
    )


def test_bias_changes_ranking_as_the_maths_says(
    neo4j_driver: Driver, neo4j_conn: Neo4jConn, namespace: str, graph: str
) -> None:
    towards_a = {"a": 0.9, "f": 0.1}
    towards_f = {"a": 0.1, "f": 0.9}
    got_a = gds_ppr(neo4j_driver, neo4j_conn.database, graph, namespace, towards_a)
    got_f = gds_ppr(neo4j_driver, neo4j_conn.database, graph, namespace, towards_f)
    # The rankings GDS gives are the ones the linear system predicts, and they differ.
    assert ranking(got_a) == ranking(numpy_ppr(towards_a))
    assert ranking(got_f) == ranking(numpy_ppr(towards_f))
    assert ranking(got_a) != ranking(got_f)
    assert got_f["f"] > got_a["f"] and got_a["a"] > got_f["a"]
    # Linear in the biases, and not normalised: scaling them scales every score.
    got_sum = gds_ppr(neo4j_driver, neo4j_conn.database, graph, namespace, {"a": 1.0, "f": 1.0})
    for k in NODES:
        assert got_sum[k] == pytest.approx(got_a[k] + got_f[k], rel=1e-6)
    scaled = gds_ppr(neo4j_driver, neo4j_conn.database, graph, namespace, {"a": 9.0, "f": 1.0})
    for k in NODES:
        assert scaled[k] == pytest.approx(10 * got_a[k], rel=1e-6)


def sources_param(bias: Mapping[str, float]) -> list[list[object]]:
    return [[k, v] for k, v in bias.items()]


SOURCES = (
    "UNWIND $bias AS pair MATCH (n:SmokeNode {namespace: $ns, key: pair[0]}) "
    "WITH collect([n, pair[1]]) AS sources "
)
PPR_CONFIG = "sourceNodes: sources, dampingFactor: $d, maxIterations: 1000, tolerance: 1e-12"


def test_write_mutate_stats_and_estimate_forms(
    neo4j_driver: Driver, neo4j_conn: Neo4jConn, namespace: str, graph: str
) -> None:
    """Every PageRank execution mode the plugin offers, not only stream: write needs GDS's export
    builders and mutate the in-memory graph store, both wired by the OpenGDS extension jar, and the
    estimates need the memory facade. A classpath that lacks any of them fails here."""
    bias = {"a": 0.3, "g": 0.7}
    want = numpy_ppr(bias)
    params = {"bias": sources_param(bias), "ns": namespace, "g": graph, "d": DAMPING}
    with neo4j_driver.session(database=neo4j_conn.database) as s:
        # mutate: the scores become a node property of the projected graph
        mutated = s.run(
            SOURCES + f"CALL gds.pageRank.mutate($g, {{mutateProperty: 'ppr', {PPR_CONFIG}}}) "
            "YIELD nodePropertiesWritten, ranIterations, didConverge "
            "RETURN nodePropertiesWritten, ranIterations, didConverge",
            params,
        ).single(strict=True)
        assert mutated["nodePropertiesWritten"] == len(NODES) and mutated["didConverge"]
        rows = s.run(
            "CALL gds.graph.nodeProperty.stream($g, 'ppr') YIELD nodeId, propertyValue "
            "RETURN gds.util.asNode(nodeId).key AS key, propertyValue AS score",
            g=graph,
        )
        in_graph = {r["key"]: r["score"] for r in rows}
        np.testing.assert_allclose(
            [in_graph[k] for k in NODES], [want[k] for k in NODES], rtol=1e-6, atol=1e-9
        )

        # write: the scores land on the database nodes
        written = s.run(
            SOURCES + f"CALL gds.pageRank.write($g, {{writeProperty: 'ppr', {PPR_CONFIG}}}) "
            "YIELD nodePropertiesWritten RETURN nodePropertiesWritten",
            params,
        ).single(strict=True)
        assert written["nodePropertiesWritten"] == len(NODES)
        rows = s.run(
            "MATCH (n:SmokeNode {namespace: $ns}) RETURN n.key AS key, n.ppr AS score", ns=namespace
        )
        on_disk = {r["key"]: r["score"] for r in rows}
        np.testing.assert_allclose(
            [on_disk[k] for k in NODES], [want[k] for k in NODES], rtol=1e-6, atol=1e-9
        )

        # stats (what `terag bench-latency` times): the same run, summarised
        stats = s.run(
            SOURCES + f"CALL gds.pageRank.stats($g, {{{PPR_CONFIG}}}) "
            "YIELD ranIterations, didConverge, centralityDistribution "
            "RETURN ranIterations, didConverge, centralityDistribution AS dist",
            params,
        ).single(strict=True)
        assert stats["didConverge"] and stats["ranIterations"] == mutated["ranIterations"]
        assert stats["dist"]["max"] == pytest.approx(max(want.values()), rel=1e-4)

        # memory estimate of the stream form, on the projected graph
        estimate = s.run(
            "CALL gds.pageRank.stream.estimate($g, {dampingFactor: $d}) "
            "YIELD nodeCount, relationshipCount, bytesMin, bytesMax, requiredMemory "
            "RETURN nodeCount, relationshipCount, bytesMin, bytesMax, requiredMemory",
            g=graph,
            d=DAMPING,
        ).single(strict=True)
        assert (estimate["nodeCount"], estimate["relationshipCount"]) == (len(NODES), len(EDGES))
        assert 0 < estimate["bytesMin"] <= estimate["bytesMax"]
        assert "Bytes" in estimate["requiredMemory"] or "KiB" in estimate["requiredMemory"]
        # ... and of the write and mutate forms, which size their result buffers too
        for mode, extra in (("write", "writeProperty: 'x'"), ("mutate", "mutateProperty: 'y'")):
            est = s.run(
                f"CALL gds.pageRank.{mode}.estimate($g, {{dampingFactor: $d, {extra}}}) "
                "YIELD nodeCount, relationshipCount, bytesMin, bytesMax "
                "RETURN nodeCount, relationshipCount, bytesMin, bytesMax",
                g=graph,
                d=DAMPING,
            ).single(strict=True)
            assert (est["nodeCount"], est["relationshipCount"]) == (len(NODES), len(EDGES))
            assert 0 < est["bytesMin"] <= est["bytesMax"]
        # a projection estimated before it is made (the memory check `terag` could run first)
        projected = s.run(
            "CALL gds.graph.project.estimate('*', '*') YIELD requiredMemory, bytesMin "
            "RETURN requiredMemory, bytesMin"
        ).single(strict=True)
        assert projected["bytesMin"] > 0 and projected["requiredMemory"]

        # the catalogue: the graph with the mutated property, its size, then gone after drop
        listed = s.run(
            "CALL gds.graph.list($g) "
            "YIELD graphName, nodeCount, relationshipCount, sizeInBytes, memoryUsage, schema "
            "RETURN graphName, nodeCount, relationshipCount, sizeInBytes, memoryUsage, schema",
            g=graph,
        ).single(strict=True)
        assert (listed["nodeCount"], listed["relationshipCount"]) == (len(NODES), len(EDGES))
        assert listed["sizeInBytes"] > 0 and listed["memoryUsage"]
        assert "ppr" in listed["schema"]["nodes"]["__ALL__"]
        dropped = s.run("CALL gds.graph.drop($g) YIELD graphName RETURN graphName", g=graph).value()
        assert dropped == [graph]
        assert (
            s.run("CALL gds.graph.list($g) YIELD graphName RETURN graphName", g=graph).value() == []
        )
