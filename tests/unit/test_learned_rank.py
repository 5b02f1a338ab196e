"""The learned final ranking's features and model (`retrieval/learned.py`), on hand-made inputs:
its candidates, the per-question scaling that makes another embedder's score scale rank alike,
the fallbacks (no linked concept, no vectors, no full-text words) and the model file's checks."""

from __future__ import annotations

import json
import math

import pytest

from terag_neo4j.recipes import PAPER, RetrievalConfig, resolve
from terag_neo4j.retrieval import learned
from terag_neo4j.retrieval.learned import FEATURES, Inputs, Model, ModelError, features


def inputs(vector_scale: float = 1.0, vector_shift: float = 0.0) -> Inputs:
    return Inputs(
        walk=[(1, 0.3), (2, 0.2), (3, 0.1)],
        text=[(4, 12.0), (1, 9.0), (5, 3.0)],
        vector=[(n, vector_shift + vector_scale * s) for n, s in [(4, 0.9), (2, 0.7), (6, 0.6)]],
        linked=[(100, 3, 0.5), (101, 40, 0.0)],
        support={100: [1, 4], 101: [2]},
    )


def column(rows: list[list[float]], name: str) -> list[float]:
    i = FEATURES.index(name)
    return [r[i] for r in rows]


def test_candidates_are_the_walks_then_the_flat_rankings_top_once_each() -> None:
    nodes, rows = features(inputs())
    assert nodes == [1, 2, 3, 4, 6, 5]
    assert all(len(r) == len(FEATURES) for r in rows)
    # node 4 is first of both flat rankings, node 1 the walk's first and BM25's second
    assert column(rows, "channels")[nodes.index(4)] == pytest.approx(2 / 3)
    assert column(rows, "channels")[nodes.index(1)] == pytest.approx(2 / 3)
    assert column(rows, "bm25_agrees")[0] == 1.0  # BM25 ranks the vector's first first too


def test_linked_concepts_count_only_when_they_carry_weight() -> None:
    nodes, rows = features(inputs())
    named = dict(zip(nodes, column(rows, "linked_named"), strict=True))
    # concept 101 weighs 0 (a hub): passage 2 names no concept that counts
    assert named[1] == pytest.approx(math.log(2)) and named[2] == 0.0
    assert column(rows, "specificity")[0] == pytest.approx(1 / 3)


def test_another_embedders_score_scale_ranks_alike() -> None:
    model = Model(tuple(float(i % 5 - 2) for i in range(len(FEATURES))))
    base = model.rank(inputs())
    other = model.rank(inputs(vector_scale=40.0, vector_shift=-7.0))
    assert [n for n, _ in base] == [n for n, _ in other]
    flat = [v for row in features(inputs())[1] for v in row]
    scaled = [v for row in features(inputs(40.0, -7.0))[1] for v in row]
    assert flat == pytest.approx(scaled)


def test_no_linked_concept_no_vectors_no_words_still_rank() -> None:
    x = Inputs(walk=[(1, 0.5), (2, 0.4)], text=[], vector=[], linked=[], support={})
    nodes, rows = features(x)
    assert nodes == [1, 2]
    assert column(rows, "linked")[0] == 0.0 and column(rows, "margin")[0] == 0.0
    model = Model(tuple(1.0 if f == "walk_rr" else 0.0 for f in FEATURES))
    assert [n for n, _ in model.rank(x)] == [1, 2]


def test_the_shipped_model_loads_and_prefers_a_passage_every_channel_ranks_first() -> None:
    model = learned.shipped()
    assert len(model.weights) == len(FEATURES) and model.version
    x = Inputs(
        walk=[(1, 0.5), (2, 0.4)],
        text=[(1, 5.0), (3, 1.0)],
        vector=[(1, 0.9), (3, 0.5)],
    )
    assert model.rank(x)[0][0] == 1


def test_a_model_file_of_other_features_or_weights_is_refused() -> None:
    good = {"format": learned.FORMAT, "features": list(FEATURES), "weights": [0.0] * len(FEATURES)}
    assert Model.from_json(good).weights == (0.0,) * len(FEATURES)
    with pytest.raises(ModelError, match="format"):
        Model.from_json({**good, "format": "x"})
    with pytest.raises(ModelError, match="features differ"):
        Model.from_json({**good, "features": list(FEATURES[:-1])})
    with pytest.raises(ModelError, match="finite"):
        Model.from_json(json.loads(json.dumps({**good, "weights": [0.0] * (len(FEATURES) - 1)})))
    with pytest.raises(ModelError, match="finite"):
        Model.from_json({**good, "weights": [math.nan] * len(FEATURES)})


def test_learned_is_a_final_rank_value_the_paper_does_not_use() -> None:
    assert resolve("default", {"final_rank": "learned"}).final_rank == "learned"
    assert PAPER.final_rank == "walk"
    assert "learned" in RetrievalConfig.model_fields["final_rank"].annotation.__args__  # type: ignore[union-attr]


def test_a_model_file_names_its_candidate_pool_within_the_walks_depth() -> None:
    good = {"format": learned.FORMAT, "features": list(FEATURES), "weights": [0.0] * len(FEATURES)}
    model = Model.from_json({**good, "candidates": {"walk": 3, "flat": 1}})
    assert (model.walk, model.flat) == (3, 1)
    # node 6 is the vector ranking's third: outside a flat pool of one
    assert {n for n, _ in model.rank(inputs())} == {1, 2, 3, 4}
    assert (learned.shipped().walk, learned.shipped().flat) != (0, 0)
    for bad in ({"walk": learned.WALK_CANDIDATES + 1, "flat": 5}, {"walk": 5, "flat": 0}):
        with pytest.raises(ModelError, match="candidates"):
            Model.from_json({**good, "candidates": bad})
