"""The final ranking on the real Neo4j + GDS: on the global and the local walk the vector
ranking's sure first passage is pinned first and the walk's order kept below it, the stage's time
is in the result's timings, and the paper's preset leaves the walk's order as it is."""

from __future__ import annotations

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.retrieval import final_rank
from terag_neo4j.retrieval.flat import flat_ranking

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
    base = sample_client.settings.with_overrides(retrieval={"walk": scope})
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
