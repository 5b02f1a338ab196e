"""The learned final ranking's features and model (`retrieval/learned.py`), on hand-made inputs:
its candidates, the per-question scaling that makes another embedder's score scale rank alike,
the fallbacks (no linked concept, no vectors, no full-text words) and the model file's checks."""

from __future__ import annotations

import json
import math

import pytest

from terag_neo4j.recipes import PAPER, RetrievalConfig, resolve
from terag_neo4j.retrieval import learned
from terag_neo4j.retrieval.learned import FEATURES, Inputs, Model, ModelError, Stump, features


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


def test_the_anchored_rules_passage_and_order_are_features() -> None:
    nodes, rows = features(inputs())
    # node 4 is first of both flat rankings: the sure one, pinned before the walk's 1, 2, 3
    assert dict(zip(nodes, column(rows, "anchor"), strict=True)) == {
        1: 0.0,
        2: 0.0,
        3: 0.0,
        4: 1.0,
        6: 0.0,
        5: 0.0,
    }
    rr = dict(zip(nodes, column(rows, "anchored_rr"), strict=True))
    assert rr == pytest.approx({4: 1.0, 1: 1 / 2, 2: 1 / 3, 3: 1 / 4, 6: 0.0, 5: 0.0})
    # without a vector ranking there is no anchor: the walk's own order
    nodes, rows = features(Inputs(walk=[(1, 0.5), (2, 0.4)], text=[(2, 3.0)], vector=[]))
    assert column(rows, "anchor") == [0.0, 0.0] and column(rows, "anchored_rr") == [1.0, 0.5]


def test_linked_concepts_count_only_when_they_carry_weight() -> None:
    nodes, rows = features(inputs())
    named = dict(zip(nodes, column(rows, "linked_named"), strict=True))
    # concept 101 weighs 0 (a hub): passage 2 names no concept that counts
    assert named[1] == pytest.approx(math.log(2)) and named[2] == 0.0
    assert column(rows, "specificity")[0] == pytest.approx(1 / 3)


def stumps_on(*names: str) -> Model:
    """A model whose every named feature above 0.3 adds 1 to a candidate's score."""
    return Model(0.0, tuple(Stump(FEATURES.index(f), 0.3, 0.0, 1.0) for f in names))


def test_another_embedders_score_scale_ranks_alike() -> None:
    model = stumps_on("vec_score", "text_score", "walk_rr", "margin")
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
    model = Model(0.0, (Stump(FEATURES.index("walk_rr"), 0.75, 0.0, 1.0),))
    assert [n for n, _ in model.rank(x)] == [1, 2]


def test_the_shipped_model_loads_and_prefers_a_passage_every_channel_ranks_first() -> None:
    model = learned.shipped()
    assert model.stumps and model.version and 1 <= model.head <= learned.MAX_HEAD
    x = Inputs(
        walk=[(1, 0.5), (2, 0.4)],
        text=[(1, 5.0), (3, 1.0)],
        vector=[(1, 0.9), (3, 0.5)],
    )
    assert model.rank(x)[0][0] == 1


GOOD = {
    "format": learned.FORMAT,
    "features": list(FEATURES),
    "base": -1.0,
    "stumps": [["anchor", 0.5, 0.0, 2.0], ["walk_rr", 0.75, -0.5, 0.5]],
}


def test_a_model_file_round_trips_and_scores_stump_by_stump() -> None:
    model = Model.from_json(GOOD)
    assert Model.from_json(json.loads(json.dumps(model.to_json()))) == model
    row = [0.0] * len(FEATURES)
    assert model.score(row) == -1.5  # neither the anchor nor the walk's first
    row[FEATURES.index("anchor")] = 1.0
    row[FEATURES.index("walk_rr")] = 1.0
    assert model.score(row) == 1.5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "x"}, "format"),
        ({"features": list(FEATURES[:-1])}, "features differ"),
        ({"stumps": [["no_such_feature", 0.5, 0.0, 1.0]]}, "known feature"),
        ({"stumps": [["anchor", 0.5, 0.0]]}, "known feature"),
        ({"stumps": [["anchor", "x", 0.0, 1.0]]}, "known feature"),
        ({"stumps": "anchor"}, "a list"),
        ({"stumps": [["anchor", 0.5, 0.0, 1.0]] * (learned.MAX_STUMPS + 1)}, "at most"),
        ({"stumps": [["anchor", math.nan, 0.0, 1.0]]}, "finite"),
        ({"base": math.inf}, "finite"),
        ({"base": None}, "known feature"),
        ({"head": 0}, "head"),
        ({"head": learned.MAX_HEAD + 1}, "head"),
    ],
)
def test_a_model_file_that_cannot_be_used_is_refused_in_one_line(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(ModelError, match=message) as err:
        Model.from_json({**GOOD, **change})
    assert "\n" not in str(err.value)


def test_learned_is_a_final_rank_value_the_paper_does_not_use() -> None:
    assert resolve("default", {"final_rank": "learned"}).final_rank == "learned"
    assert PAPER.final_rank == "walk"
    assert "learned" in RetrievalConfig.model_fields["final_rank"].annotation.__args__  # type: ignore[union-attr]


def test_a_model_file_names_its_candidate_pool_within_the_walks_depth() -> None:
    good = GOOD
    model = Model.from_json({**good, "candidates": {"walk": 3, "flat": 1}})
    assert (model.walk, model.flat) == (3, 1)
    # node 6 is the vector ranking's third: outside a flat pool of one
    assert {n for n, _ in model.rank(inputs())} == {1, 2, 3, 4}
    assert (learned.shipped().walk, learned.shipped().flat) != (0, 0)
    for bad in ({"walk": learned.WALK_CANDIDATES + 1, "flat": 5}, {"walk": 5, "flat": 0}):
        with pytest.raises(ModelError, match="candidates"):
            Model.from_json({**good, "candidates": bad})
