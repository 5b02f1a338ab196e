"""Retrieval against the real Neo4j + GDS, checked against an independent in-process PageRank."""

from __future__ import annotations

import numpy as np
import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.eval.reference import (
    export_graph,
    passage_seeds,
    passage_vectors,
    personalized_pagerank,
    top_passages,
)
from terag_neo4j.retrieval import RetrievalError
from terag_neo4j.store import NamespaceNotFound, passage_uid

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
    assert abs(sum(m.weight for m in res.matches if m.match == "exact") - 1) < 1e-9
    ids = [p.id for p in res.passages]
    assert len(ids) == 5 and len(set(ids)) == 5
    assert any(i.endswith("beetle.md") for i in ids[:3])
    assert all(a.score >= b.score for a, b in zip(res.passages, res.passages[1:], strict=False))
    assert {"projection", "linking", "embedding", "pagerank"} <= set(res.timings)


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


@pytest.mark.parametrize("preset", ["default", "paper"])
def test_gds_ranking_equals_in_process_reference(indexed: TeragClient, preset: str) -> None:
    # Converged scores, not the stopping rule, are compared.
    st = indexed.settings.with_overrides(preset=preset, tolerance=1e-10)
    indexed.retriever.settings = st
    res = indexed.retrieve("Ferdinand Porsche and Stuttgart", top_k=5)
    assert res.mode == "pagerank"
    ns = st.namespace
    _, skip, rels = indexed.retriever.walk()
    graph = export_graph(indexed.store, ns, st.orientation, skip, rels)
    seeds = [(m.uid, m.weight) for m in res.matches]
    if st.passage_seed_weight > 0:
        uids, vectors = passage_vectors(indexed.store, ns)
        query = indexed.embedder.embed([res.query])[0].tolist()
        seeds += passage_seeds(
            uids, vectors, query, st.passage_seed_weight, st.passage_seed_power, 0
        )
        assert len(seeds) > len(res.matches)
    scores = personalized_pagerank(graph, seeds, st.damping, tolerance=1e-10)
    ref = top_passages(graph, scores, 5)
    assert [passage_uid(ns, p.id) for p in res.passages] == [u for u, _ in ref]
    np.testing.assert_allclose([p.score for p in res.passages], [s for _, s in ref], rtol=1e-3)


def test_projection_is_reused_and_rebuilt_after_changes(indexed: TeragClient) -> None:
    ns = indexed.settings.namespace
    r = indexed.retriever
    g1 = r.ensure_projection(ns)
    assert r.ensure_projection(ns) == g1
    from terag_neo4j.documents import Document

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
    res = indexed.retrieve("automobile factory", entities=["automobile plant"], top_k=3)
    assert res.matches and all(m.match == "semantic" for m in res.matches)
    assert len(res.matches) <= indexed.settings.semantic_top_n
    assert abs(sum(m.weight for m in res.matches) - 1) < 1e-9
    assert all(-1 <= m.similarity <= 1 for m in res.matches)


def test_no_entities_walks_from_similar_passages_or_falls_back_to_dense(
    indexed: TeragClient,
) -> None:
    res = indexed.retrieve("what is it about?", entities=[], top_k=3)
    assert res.mode == "pagerank" and not res.matches and len(res.passages) == 3
    assert res.fallback_reason == (
        "no entities found in the query: the walk starts from similar passages alone"
    )
    indexed.retriever.settings = indexed.settings.with_overrides(passage_seed_weight=0.0)
    res = indexed.retrieve("what is it about?", entities=[], top_k=3)
    assert res.mode == "dense" and res.fallback_reason == "no entities found in the query"
    assert len(res.passages) == 3


def test_hybrid_and_dense_modes(indexed: TeragClient) -> None:
    dense = indexed.retrieve("Volkswagen Beetle production in Mexico", mode="dense", top_k=3)
    assert dense.mode == "dense" and dense.fallback_reason is None
    assert dense.passages[0].id.endswith(("mexico_puebla.md", "beetle.md"))
    hybrid = indexed.retrieve("Volkswagen Beetle production in Mexico", mode="hybrid", top_k=3)
    assert hybrid.mode == "hybrid" and len(hybrid.passages) == 3


def test_bad_queries_give_clear_errors(indexed: TeragClient) -> None:
    with pytest.raises(RetrievalError, match="empty query"):
        indexed.retrieve("   ")
    with pytest.raises(NamespaceNotFound, match="does not exist"):
        indexed.retrieve("Volkswagen", namespace="no_such_namespace")
    with pytest.raises(ValueError, match="invalid namespace"):
        indexed.retrieve("Volkswagen", namespace="bad name!")
