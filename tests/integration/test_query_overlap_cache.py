"""The query path's overlap and result cache against the real Neo4j: the full-text ranking read
while the question is embedded ranks as the single round trip does, and a kept result is served
only while the namespace is unchanged."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.retrieval.flat import flat_ranking
from terag_neo4j.retrieval.overlap import Background

from .conftest import SAMPLE

pytestmark = pytest.mark.integration

QUESTION = "Where are the headquarters of the company that makes the Beetle?"


@pytest.fixture
def cached(base_settings: Settings, namespace: str) -> Iterator[TeragClient]:
    with TeragClient(base_settings, namespace=namespace, query_cache_size=8) as client:
        client.index([SAMPLE], progress=False)
        yield client


def _ranked(res: object) -> list[tuple[str, float]]:
    return [(p.id, p.score) for p in res.passages]  # type: ignore[attr-defined]


def test_the_flat_ranking_read_during_the_embedding_is_the_one_round_trip_ranking(
    cached: TeragClient, namespace: str
) -> None:
    store = cached.store
    for question in (QUESTION, "Who designed the Volkswagen Beetle?", "the of and"):
        vector = cached.retriever.embed_query(question)
        at_once = flat_ranking(store, namespace, question, vector, 200)
        later = flat_ranking(store, namespace, question, Background(lambda v=vector: v, True), 200)
        assert later.relevance == at_once.relevance
        assert (later.by_text, later.by_vector) == (at_once.by_text, at_once.by_vector)
    assert at_once.by_text == 0 and at_once.by_vector > 0  # stopwords only: meaning alone


def test_a_question_asked_again_is_served_from_the_cache_until_the_namespace_changes(
    cached: TeragClient,
) -> None:
    first = cached.retrieve(QUESTION, top_k=5)
    assert "cache" not in first.timings and "pagerank" in first.timings
    again = cached.retrieve(QUESTION, top_k=5)
    assert set(again.timings) == {"cache"}
    assert _ranked(again) == _ranked(first) and again.restart == first.restart
    again.passages.clear()  # a caller's changes do not reach what is kept
    assert _ranked(cached.retrieve(QUESTION, top_k=5)) == _ranked(first)
    other_k = cached.retrieve(QUESTION, top_k=3)  # another k is another answer
    assert "cache" not in other_k.timings and _ranked(other_k) == _ranked(first)[:3]

    cached.index(
        [
            Document(
                id="wolfsburg-2",
                title="Wolfsburg",
                text="Volkswagen makes the Beetle in Wolfsburg.",
            )
        ],
        progress=False,
    )
    after = cached.retrieve(QUESTION, top_k=5)
    assert "cache" not in after.timings and "pagerank" in after.timings
    assert set(cached.retrieve(QUESTION, top_k=5).timings) == {"cache"}

    cached.delete("wolfsburg-2")
    assert "cache" not in cached.retrieve(QUESTION, top_k=5).timings


def test_another_retrieval_setting_is_not_served_the_kept_result(cached: TeragClient) -> None:
    cached.retrieve(QUESTION, top_k=5)
    r = cached.retriever
    r.settings = r.settings.with_overrides(retrieval={"damping": 0.3})
    assert "cache" not in cached.retrieve(QUESTION, top_k=5).timings
    r.settings = r.settings.with_overrides(query_cache_size=0)
    assert "cache" not in cached.retrieve(QUESTION, top_k=5).timings
    assert "cache" not in cached.retrieve(QUESTION, top_k=5).timings
