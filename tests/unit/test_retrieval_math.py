"""The restart vector (TERAG eqs. 3-5) and rank fusion, on hand-made matches."""

import pytest

from terag_neo4j.retrieval import MatchedConcept, RetrievedPassage, restart_weights, rrf_fuse
from terag_neo4j.store.pairs import pair_deltas, pair_key


def m(uid: str, kind: str, s: float, f: int) -> MatchedConcept:
    return MatchedConcept("e", uid, uid, uid, "other", kind, s, f)  # type: ignore[arg-type]


def test_weights_are_s_over_f_normalised_per_group() -> None:
    got = {
        x.uid: x.weight
        for x in restart_weights(
            [
                m("a", "exact", 1.0, 1),
                m("b", "exact", 1.0, 3),
                m("c", "semantic", 0.8, 2),
                m("d", "semantic", 0.4, 2),
            ]
        )
    }
    assert got["a"] == pytest.approx(0.75) and got["b"] == pytest.approx(0.25)
    assert got["c"] == pytest.approx(2 / 3) and got["d"] == pytest.approx(1 / 3)


def test_inverse_frequency_only_ablation_ignores_similarity() -> None:
    got = {
        x.uid: x.weight
        for x in restart_weights(
            [m("c", "semantic", 0.9, 1), m("d", "semantic", 0.1, 1)], weighting="inv_f"
        )
    }
    assert got["c"] == pytest.approx(0.5) == got["d"]


def test_exact_match_wins_over_semantic_for_the_same_concept() -> None:
    got = restart_weights([m("a", "semantic", 0.9, 1), m("a", "exact", 1.0, 1)])
    assert [(x.uid, x.match, x.weight) for x in got] == [("a", "exact", 1.0)]


def test_non_positive_similarity_gets_no_weight() -> None:
    assert restart_weights([m("a", "semantic", -0.2, 1)]) == []


def test_pair_deltas_count_each_unordered_pair_once_per_passage() -> None:
    rows = pair_deltas([["b", "a", "c"], ["a", "b"], ["a", "a"]], +1)
    got = {(r["a"], r["b"]): r["delta"] for r in rows}
    assert got == {("a", "b"): 2, ("a", "c"): 1, ("b", "c"): 1}
    (row,) = pair_deltas([["y", "x"]], -1)
    assert (row["a"], row["b"], row["delta"]) == ("x", "y", -1)
    assert row["pair"] == pair_key("x", "y") != pair_key("y", "x")


def test_rrf_rewards_agreement() -> None:
    p = lambda i: RetrievedPassage(i, i, i, "", 0.0)  # noqa: E731
    fused = rrf_fuse([[p("x"), p("y"), p("z")], [p("y"), p("w")]], k=2)
    assert [q.id for q in fused] == ["y", "x"]


def test_pooled_split_weighs_a_weak_semantic_match_by_its_similarity() -> None:
    matches = [m("a", "exact", 1.0, 1), m("c", "semantic", 0.5, 1)]
    grouped = {x.uid: x.weight for x in restart_weights(matches, split="group")}
    pooled = {x.uid: x.weight for x in restart_weights(matches, split="pooled")}
    assert grouped["a"] == pytest.approx(grouped["c"])  # each group carries the same mass
    assert pooled["a"] == pytest.approx(2 / 3) and pooled["c"] == pytest.approx(1 / 3)


def test_uniform_weighting_ignores_specificity() -> None:
    got = restart_weights([m("a", "exact", 1.0, 1), m("b", "exact", 1.0, 9)], weighting="uniform")
    assert [x.weight for x in got] == pytest.approx([0.5, 0.5])
