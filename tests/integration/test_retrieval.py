"""Retrieval against the real Neo4j + GDS, checked against an independent in-process PageRank."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from terag_bench.reference import export_graph, personalized_pagerank, top_passages

from terag_neo4j.client import TeragClient
from terag_neo4j.retrieval.flat import lucene_query
from terag_neo4j.retrieval.retriever import RetrievalError
from terag_neo4j.store import NamespaceNotFound, gds, passage_uid
from terag_neo4j.store.ids import text_index

from .conftest import SAMPLE

pytestmark = pytest.mark.integration


@pytest.fixture
def indexed(spacy_client: TeragClient) -> TeragClient:
    spacy_client.index([SAMPLE], progress=False)
    return spacy_client


def test_pagerank_finds_the_multi_hop_passages(indexed: TeragClient) -> None:
    res = indexed.retrieve(
        "Where are the headquarters of the company that makes the Beetle?", top_k=5
    )
    assert res.mode == "pagerank" and res.fallback_reason is None
    assert any(m.match == "exact" for m in res.matches)
    # verified weights: f^-2 times the best relevance of the concept's passages, in (0, 1]
    assert all(0 < m.weight <= 1 and 0 < m.support <= 1 for m in res.matches)
    for m in res.matches:
        assert m.weight == pytest.approx(m.frequency**-2 * m.support**2)
    ids = [p.id for p in res.passages]
    assert len(ids) == 5 and len(set(ids)) == 5
    assert any(i.endswith("beetle.md") for i in ids[:3])
    assert all(a.score >= b.score for a, b in zip(res.passages, res.passages[1:], strict=False))
    assert {"projection", "linking", "embedding", "flat", "restart", "pagerank"} <= set(res.timings)
    assert res.walk == "global"  # a small namespace walks its cached projection


def test_the_question_names_its_concepts_without_ner_or_tokens(indexed: TeragClient) -> None:
    # spaCy finds no entity in this question; the lookup of its n-grams finds the title concept.
    res = indexed.retrieve("Who designed the Volkswagen Beetle?", top_k=3)
    assert res.mode == "pagerank" and res.fallback_reason is None
    assert res.entities == ["Volkswagen Beetle"]
    assert "title" in {m.type for m in res.matches}
    assert (res.input_tokens, res.output_tokens) == (0, 0)
    assert res.passages[0].id.endswith("beetle.md")
    paper = indexed.retriever.settings.with_overrides(preset="paper")
    indexed.retriever.settings = paper
    assert indexed.retrieve("Who designed the Volkswagen Beetle?", top_k=3).mode == "dense"


def test_local_walk_ranks_like_the_global_one_and_leaves_no_graph(indexed: TeragClient) -> None:
    q = "Where are the headquarters of the company that makes the Beetle?"
    r = indexed.retriever
    glob = indexed.retrieve(q, top_k=5)
    r.settings = indexed.settings.with_overrides(retrieval={"walk": "local"})
    local = indexed.retrieve(q, top_k=5)
    assert local.walk == "local" and glob.walk == "global"
    assert local.restart == glob.restart  # the same restart vector, only the graph differs
    assert 0 < local.graph_nodes <= indexed.stats().passages + indexed.stats().concepts
    assert local.passages[0].id == glob.passages[0].id
    assert {p.id for p in local.passages[:3]} == {p.id for p in glob.passages[:3]}
    assert "local_projection" in local.timings
    left = indexed.store.read("gds_graphs", prefix=gds.LOCAL_PREFIX)
    assert not left, f"per-query graphs left behind: {left}"

    # Only the best seed grows the graph; every other seed is still a restart node in it.
    r.settings = indexed.settings.with_overrides(retrieval={"walk": "local", "local_seeds": 1})
    lean = indexed.retrieve(q, top_k=5)
    seeds = [n for n, _ in lean.restart if n not in {m.node for m in lean.matches}]
    assert len(seeds) > 1 and lean.restart == local.restart
    assert lean.graph_relationships < local.graph_relationships
    assert lean.passages[0].id == local.passages[0].id


@pytest.mark.parametrize("preset", ["default", "paper"])
def test_gds_ranking_equals_in_process_reference(indexed: TeragClient, preset: str) -> None:
    # Converged scores, not the stopping rule, are compared; the same restart vector; the walk's
    # own order (the final ranking may pin a dense passage first, which PageRank does not know).
    st = indexed.settings.with_overrides(
        preset=preset, retrieval={"tolerance": 1e-10, "walk": "global", "final_rank": "walk"}
    )
    indexed.retriever.settings = st
    res = indexed.retrieve("Ferdinand Porsche and Stuttgart", top_k=5)
    assert res.mode == "pagerank"
    if preset == "default":
        assert len(res.restart) > len(res.matches)  # passages are seeded too
    ns = st.namespace
    graph = export_graph(
        indexed.store, ns, indexed.retriever.projection_spec(), st.retrieval.orientation
    )
    scores = personalized_pagerank(graph, res.restart, st.retrieval.damping, tolerance=1e-10)
    ref = top_passages(graph, scores, 5)
    assert [passage_uid(ns, p.id) for p in res.passages] == [u for u, _ in ref]
    np.testing.assert_allclose([p.score for p in res.passages], [s for _, s in ref], rtol=1e-3)


def test_projection_is_reused_and_rebuilt_after_changes(indexed: TeragClient) -> None:
    ns = indexed.settings.namespace
    r = indexed.retriever
    g1 = r.ensure_projection(ns)
    assert r.ensure_projection(ns) == g1
    from terag_neo4j.core.documents import Document

    indexed.index(
        [Document(id="new", title="Hanover", text="Hanover is the capital of Lower Saxony.")],
        progress=False,
    )
    g2 = r.ensure_projection(ns)
    assert g2 != g1
    graphs = {x["graphName"] for x in indexed.store.read("gds_graphs", prefix=f"terag_{ns}_")}
    assert g2 in graphs and g1 not in graphs
    indexed.drop()
    assert not indexed.store.read("gds_graphs", prefix=f"terag_{ns}_")


def test_semantic_matching_when_no_exact_match(indexed: TeragClient) -> None:
    indexed.retriever.settings = indexed.settings.with_overrides(
        retrieval={"weighting": "s_over_f"}
    )
    res = indexed.retrieve("automobile factory", entities=["automobile plant"], top_k=3)
    assert res.matches and all(m.match == "semantic" for m in res.matches)
    assert len(res.matches) <= indexed.settings.retrieval.semantic_top_n
    assert abs(sum(m.weight for m in res.matches) - 1) < 1e-9
    assert all(-1 <= m.similarity <= 1 for m in res.matches)


def test_no_entities_walks_from_similar_passages_or_falls_back_to_dense(
    indexed: TeragClient,
) -> None:
    res = indexed.retrieve("what is it about?", entities=[], top_k=3)
    assert res.mode == "pagerank" and not res.matches and len(res.passages) == 3
    assert res.fallback_reason == (
        "no entities found in the query: the walk starts from the flat ranking alone"
    )
    indexed.retriever.settings = indexed.settings.with_overrides(retrieval={"seeds": "none"})
    res = indexed.retrieve("what is it about?", entities=[], top_k=3)
    assert res.mode == "dense" and res.fallback_reason == "no entities found in the query"
    assert len(res.passages) == 3


def test_hybrid_and_dense_modes(indexed: TeragClient) -> None:
    dense = indexed.retrieve("Volkswagen Beetle production in Mexico", mode="dense", top_k=3)
    assert dense.mode == "dense" and dense.fallback_reason is None
    assert dense.passages[0].id.endswith(("mexico_puebla.md", "beetle.md"))
    hybrid = indexed.retrieve("Volkswagen Beetle production in Mexico", mode="hybrid", top_k=3)
    assert hybrid.mode == "hybrid" and len(hybrid.passages) == 3


def test_the_question_is_embedded_once_in_every_mode(
    indexed: TeragClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeds, the flat ranking and the hybrid mode's dense ranking share one question vector."""
    r = indexed.retriever
    calls: list[str] = []
    embed = r.embed_query

    def counted(query: str, embedder: Any = None) -> list[float]:
        calls.append(query)
        return embed(query, embedder)

    monkeypatch.setattr(r, "embed_query", counted)
    q = "Volkswagen Beetle production in Mexico"
    for mode in ("pagerank", "hybrid", "flat", "dense"):
        calls.clear()
        assert indexed.retrieve(q, mode=mode, top_k=3).passages
        assert calls == [q], mode


def test_flat_and_dense_modes_skip_linking(indexed: TeragClient) -> None:
    """Without a walk there is nothing to link the question to: neither mode spends time on
    linking or NER, and caller-supplied entities are only reported back."""
    q = "Volkswagen Beetle production in Mexico"
    assert indexed.retrieve(q, top_k=3).entities  # the walk links this question
    for mode in ("flat", "dense"):
        res = indexed.retrieve(q, mode=mode, top_k=3)
        assert res.mode == mode and not res.entities and not res.matches
        assert not {"linking", "ner", "matching"} & set(res.timings)
        given = indexed.retrieve(q, mode=mode, top_k=3, entities=["Volkswagen Beetle"])
        assert given.entities == ["Volkswagen Beetle"] and not given.matches


def test_flat_mode_fuses_bm25_and_dense_by_reciprocal_rank(indexed: TeragClient) -> None:
    """`flat` is the no-graph baseline: the namespace's full-text and vector rankings fused by
    reciprocal rank (c = 60), recomputed here from the two indexes queried directly."""
    q = "Volkswagen Beetle production in Mexico"
    flat = indexed.retrieve(q, mode="flat", top_k=4)
    assert flat.mode == "flat" and flat.score_kind == "rrf" and not flat.walk
    assert not flat.restart and len(flat.passages) == 4
    ns = indexed.settings.namespace
    rows = indexed.store.driver.execute_query(
        "CALL db.index.fulltext.queryNodes($index, $q) YIELD node, score "
        "RETURN node.id AS id ORDER BY score DESC, node.uid",
        index=text_index(ns),
        q=lucene_query(q),
    ).records
    dense = indexed.retrieve(q, mode="dense", top_k=50).passages
    fused: dict[str, float] = {}
    for ranking in ([r["id"] for r in rows], [p.id for p in dense]):
        for rank, pid in enumerate(ranking):
            fused[pid] = fused.get(pid, 0.0) + 1 / (60 + rank + 1)
    want = sorted(fused, key=lambda pid: (-fused[pid], pid))[:4]
    assert [p.id for p in flat.passages] == want
    assert [p.score for p in flat.passages] == pytest.approx([fused[pid] for pid in want])
    assert all(p.provenance.source for p in flat.passages)


def test_bad_queries_give_clear_errors(indexed: TeragClient) -> None:
    with pytest.raises(RetrievalError, match="empty query"):
        indexed.retrieve("   ")
    with pytest.raises(NamespaceNotFound, match="does not exist"):
        indexed.retrieve("Volkswagen", namespace="no_such_namespace")
    with pytest.raises(ValueError, match="invalid namespace"):
        indexed.retrieve("Volkswagen", namespace="bad name!")
