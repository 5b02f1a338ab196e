"""The final ranking on the real Neo4j + GDS: under `anchored`, on the global and the local walk,
the vector ranking's sure first passage is pinned first and the walk's order kept below it; the
stage's time is in the result's timings, and the paper's preset leaves the walk's order as it
is. The learned ranking (the default) returns the shipped model's picks of what the walk and the
flat rankings found, then the walk's order, on either walk, for a question that links no
concept, and on a namespace of another embedder."""

from __future__ import annotations

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.embeddings import DEFAULT_MODEL
from terag_neo4j.retrieval import final_rank, learned
from terag_neo4j.retrieval.flat import flat_ranking

from .conftest import SAMPLE

pytestmark = pytest.mark.integration

QUESTIONS = (
    "Where are the headquarters of the company that makes the Beetle?",
    "Who designed the Volkswagen Beetle?",
    "Which city was the Beetle built in after Germany?",
    "Where was the car designed by Ferdinand Porsche produced?",
)


def anchor_id(client: TeragClient, question: str) -> str | None:
    """What the rule pins for `question`, computed apart from the retriever."""
    r, ns = client.retriever, client.settings.namespace
    vec = r.embed_query(question)
    flat = flat_ranking(client.store, ns, question, vec, r.rc.flat_top)
    node = final_rank.anchor_node(flat.text_order, flat.vector_order)
    if node is None:
        return None
    (row,) = client.store.read("passages_by_node", nodes=[node])
    return str(row["id"])


@pytest.mark.parametrize("scope", ["global", "local"])
def test_the_sure_flat_passage_is_pinned_on_either_walk(
    sample_client: TeragClient, scope: str
) -> None:
    r = sample_client.retriever
    base = sample_client.settings.with_overrides(
        retrieval={"walk": scope, "final_rank": "anchored"}
    )
    moved = 0
    for q in QUESTIONS:
        r.settings = base.with_overrides(retrieval={"walk": scope, "final_rank": "walk"})
        walked = r.retrieve(q, top_k=4)
        r.settings = base
        res = r.retrieve(q, top_k=4)
        assert res.mode == "pagerank" and res.walk == scope and res.matches
        assert "final" in res.timings and "final" not in walked.timings
        assert res.timings["final"] >= 0
        ids, walk_ids = [p.id for p in res.passages], [p.id for p in walked.passages]
        anchor = anchor_id(sample_client, q)
        if anchor is None:
            assert ids == walk_ids
            continue
        moved += anchor != walk_ids[0]
        assert ids[0] == anchor
        assert ids[1:] == [i for i in walk_ids if i != anchor][:3]
        assert all(a.score >= b.score for a, b in zip(res.passages, res.passages[1:], strict=False))
    assert moved, "the walk put every sure flat passage first already: nothing was checked"


def test_the_papers_preset_keeps_the_walks_order(sample_client: TeragClient) -> None:
    r = sample_client.retriever
    r.settings = sample_client.settings.with_overrides(preset="paper")
    res = r.retrieve(QUESTIONS[0], top_k=4)
    assert "final" not in res.timings


def learned_ids(client: TeragClient, question: str, k: int) -> tuple[list[str], list[str]]:
    """The learned ranking's ids for `question`, and what the shipped model makes of the inputs
    the final stage saw, read apart from the stage: its first `head` picks, then the walk's
    order."""
    r = client.retriever
    seen: list[learned.Inputs] = []
    r.probe = seen.append
    try:
        res = r.retrieve(question, top_k=k)
    finally:
        r.probe = None
    assert res.mode == "pagerank" and "final" in res.timings and len(seen) == 1
    model = learned.shipped()
    picks = [n for n, _ in model.rank(seen[0])][: min(model.head, k)]
    order = picks + [n for n, _ in seen[0].walk if n not in picks][: k - len(picks)]
    rows = client.store.read("passages_by_node", nodes=order)
    by_node = {int(row["node"]): str(row["id"]) for row in rows}
    assert [p.score for p in res.passages] == sorted((p.score for p in res.passages), reverse=True)
    return [p.id for p in res.passages], [by_node[n] for n in order]


@pytest.mark.parametrize("scope", ["global", "local"])
def test_the_learned_ranking_is_the_models_order_on_either_walk(
    sample_client: TeragClient, scope: str
) -> None:
    r = sample_client.retriever
    base = sample_client.settings
    r.settings = base.with_overrides(retrieval={"walk": scope, "final_rank": "learned"})
    try:
        for q in QUESTIONS:
            ids, want = learned_ids(sample_client, q, 4)
            assert ids == want and len(ids) == 4
        res = r.retrieve("Which city is the headquarters of Volkswagen?", top_k=3)
        assert res.walk == scope and "Wolfsburg" in res.passages[0].text
    finally:
        r.settings = base


def test_a_question_that_links_no_concept_is_ranked_by_the_model(
    sample_client: TeragClient,
) -> None:
    r = sample_client.retriever
    base = sample_client.settings
    r.settings = base.with_overrides(retrieval={"final_rank": "learned"})
    try:
        q = "which factory town builds the small rounded people's car?"
        res = r.retrieve(q, top_k=3)
        assert not res.matches and res.mode == "pagerank", res.matches
        ids, want = learned_ids(sample_client, q, 3)
        assert ids == want
    finally:
        r.settings = base


def test_another_embedders_namespace_ranks_alike(base_settings: Settings, namespace: str) -> None:
    """MiniLM's cosines sit on another scale than bge-small's: scaled per question, the model
    puts the same passage first."""
    settings = base_settings.with_overrides(
        embedding_model=DEFAULT_MODEL, retrieval={"final_rank": "learned"}
    )
    with TeragClient(settings, namespace=namespace) as client:
        client.index([SAMPLE], progress=False)
        res = client.retrieve("Which city is the headquarters of Volkswagen?", top_k=3)
        assert res.mode == "pagerank" and "final" in res.timings
        assert "Wolfsburg" in res.passages[0].text
        ids, want = learned_ids(client, "Who designed the Volkswagen Beetle?", 3)
        assert ids == want


def test_without_a_vector_ranking_the_walks_order_stands(sample_client: TeragClient) -> None:
    """Every passage of a namespace carries a vector (an archive without them is refused), so a
    namespace without vectors is what the stage sees as an empty vector ranking: the real
    walk's inputs with the vector ranking taken out keep the walk's order (the model, trained
    with vectors always there, ranked worse than the walk without them); with the vector
    ranking the model scores them (its probabilities, not the walk's mass)."""
    r = sample_client.retriever
    base = sample_client.settings
    q = "Which city is the headquarters of Volkswagen?"
    r.settings = base.with_overrides(retrieval={"final_rank": "walk"})
    seen: list[learned.Inputs] = []
    r.probe = seen.append
    try:
        walked = r.retrieve(q, top_k=20).passages
    finally:
        r.probe = None
        r.settings = base
    (x,) = seen
    blind = learned.Inputs(x.walk, x.text, [], x.linked, x.support)
    ranked = final_rank.learned_order(sample_client.store, blind, walked, 3)
    assert [p.id for p in ranked] == [p.id for p in walked[:3]]
    assert "Wolfsburg" in ranked[0].text
    with_vectors = final_rank.learned_order(sample_client.store, x, walked, 3)
    assert [p.score for p in with_vectors] != [p.score for p in ranked]
