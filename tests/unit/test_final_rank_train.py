"""`terag-bench final-rank-train`'s parts on hand-made feature records (no database): the
corpus groups of leave-one-corpus-out, the boosted stumps learning which channel finds the gold
passage (and matching the textbook algorithm's scores), the won/lost counts and the choice of the
configuration that misses fewest targets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from terag_bench import final_rank_train as t
from terag_bench import stumps


def record(qid: str, gold: int, split: str = "train", kind: str = "recall") -> dict[str, Any]:
    """A question where the vector ranking's first (node `gold`) is the only good passage and
    the walk puts it last of three."""
    others = [n for n in (1, 2, 3) if n != gold]
    return {
        "id": qid,
        "split": split,
        "kind": kind,
        "gold": 1,
        "inputs": {
            "walk": [[others[0], 0.5], [others[1], 0.4], [gold, 0.1]],
            "text": [[others[1], 9.0], [gold, 8.0], [others[0], 1.0]],
            "vector": [[gold, 0.9], [others[0], 0.5], [others[1], 0.4]],
            "linked": [],
            "support": {},
        },
        "labels": {str(gold): 1.0 if kind == "recall" else 0.8},
    }


SETS = {
    "hotpotqa": [record(f"h{i}", 1 + i % 3) for i in range(6)],
    "hotpotqa_hipporag_train100": [record(f"t{i}", 1 + i % 3) for i in range(6)],
    "medical": [record(f"m{i}", 1 + i % 3, kind="coverage") for i in range(6)],
}


def test_a_set_and_its_training_set_are_one_group() -> None:
    assert t.corpus("hotpotqa_hipporag_train100") == t.corpus("hotpotqa") == "hotpotqa"
    assert t.corpus("medical") == "medical"


@pytest.mark.parametrize("head", [1, 2])
def test_the_stumps_learn_to_put_the_vector_first_first_on_an_unseen_group(head: int) -> None:
    questions = t.prepare(SETS, 20, 10)
    table = t.loco(questions, t.Config(20, 0.1, 20, 10, head))
    assert set(table) == set(SETS)
    for name, row in table.items():
        metric = "hit@5" if name == "medical" else "R@2"
        assert row["dense"][metric] == 100.0
        assert row["learned"][metric] == 100.0, (name, row["learned"])
    # the walk ranks the gold passage third: R@2 is won on every question against it
    assert table["hotpotqa"]["versus"]["+walk R@2"] == 6
    assert table["hotpotqa"]["versus"]["-dense R@2"] == 0


def test_a_coverage_label_counts_from_three_quarters() -> None:
    rec = record("m", 2, kind="coverage")
    assert t._label(rec, 2) == 1.0
    rec["labels"] = {"2": 0.7}
    assert t._label(rec, 2) == 0.0


def test_the_configuration_missing_fewest_targets_wins_then_the_smallest_shortfall() -> None:
    def table(learned: float) -> t.Table:
        row = {m: {"R@2": 50.0, "n": 1} for m in ("bm25", "dense", "flat", "walk", "anchored")}
        return {"s": row | {"learned": {"R@2": learned, "n": 1}}}

    assert t.rank_key(table(55.0)) > t.rank_key(table(49.0)) > t.rank_key(table(40.0))
    assert t.shortfalls(table(45.0)) == [5.0]


def test_the_kept_apart_half_never_trains() -> None:
    sets = {"hotpotqa": [record("a", 1), record("b", 2, split="holdout")]}
    x, _, _ = t.design(t.prepare(sets, 20, 10), ["hotpotqa"])
    assert len(x) == 3  # the training question's three candidates alone


def test_a_boosted_stump_is_a_newton_step_on_the_best_split() -> None:
    """One round by hand: the split that separates the labels, leaves (sum of weighted
    residuals) / (sum of weighted p(1 - p)) times the rate, from the prior log-odds."""
    x = np.array([[0.0, 5.0], [0.1, 5.0], [0.9, 5.0], [1.0, 5.0]])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    w = np.full(4, 0.25)
    model = stumps.fit(x, y, w, t.Config(1, 0.5, 20, 10, 2))
    assert model.base == 0.0  # half the weight is positive
    (s,) = model.stumps
    assert (s.feature, s.threshold) == (0, 0.5)  # feature 1 is constant: never split
    # p = 0.5 everywhere: residuals -0.5 / +0.5, p(1 - p) = 0.25, the step +-2, times 0.5
    assert (s.left, s.right) == pytest.approx((-1.0, 1.0))
    assert list(stumps.model_scores(model, x)) == [model.score(r) for r in x.tolist()]
