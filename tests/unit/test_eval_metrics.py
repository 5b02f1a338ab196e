"""Recall@k (HippoRAG) and SQuAD EM/F1 on hand-checked examples."""

import pytest
from terag_bench.scoring import (
    best_over_aliases,
    exact_match,
    f1,
    mean,
    normalize_answer,
    percentile,
    percentile_ms,
    recall_at_k,
)


def test_recall_counts_gold_found_in_the_first_k() -> None:
    retrieved = ["p1", "x", "p2", "y", "z"]
    assert recall_at_k(retrieved, ["p1", "p2"], 2) == 0.5
    assert recall_at_k(retrieved, ["p1", "p2"], 5) == 1.0
    assert recall_at_k(retrieved, ["p3"], 5) == 0.0


def test_recall_with_more_gold_than_k_is_capped_below_one() -> None:
    # 2Wiki has questions with 4 gold passages: R@2 can reach at most 0.5 there, by definition.
    assert recall_at_k(["a", "b"], ["a", "b", "c", "d"], 2) == 0.5


def test_recall_ignores_duplicate_gold_and_short_lists() -> None:
    assert recall_at_k(["a"], ["a", "a", "b"], 5) == 0.5


def test_recall_rejects_empty_gold_and_bad_k() -> None:
    with pytest.raises(ValueError):
        recall_at_k(["a"], [], 5)
    with pytest.raises(ValueError):
        recall_at_k(["a"], ["a"], 0)


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("The Beatles", "beatles"),
        ("  An  apple,  a day! ", "apple day"),
        ("U.S.A.", "usa"),
        ("Theatre of the Absurd", "theatre of absurd"),  # 'the' only as a whole word
        ("20 March 851", "20 march 851"),
    ],
)
def test_squad_normalisation(raw: str, norm: str) -> None:
    assert normalize_answer(raw) == norm


def test_exact_match_after_normalisation() -> None:
    assert exact_match("the Eiffel Tower.", "Eiffel Tower") == 1.0
    assert exact_match("Eiffel", "Eiffel Tower") == 0.0


def test_f1_token_overlap() -> None:
    # pred tokens {barack, obama}, gold {barack, hussein, obama}: P=1, R=2/3 -> F1=0.8
    assert f1("Barack Obama", "Barack Hussein Obama") == pytest.approx(0.8)
    assert f1("nothing shared", "Paris") == 0.0
    assert f1("", "Paris") == 0.0
    # repeated tokens count only as often as they appear in both
    assert f1("new new york", "new york") == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))


def test_best_over_aliases_takes_the_max_of_each_metric() -> None:
    em, f = best_over_aliases("NYC", ["New York City", "NYC"])
    assert (em, f) == (1.0, 1.0)
    em, f = best_over_aliases("New York", ["New York City", "Big Apple"])
    assert em == 0.0 and f == pytest.approx(0.8)
    assert best_over_aliases("x", []) == (0.0, 0.0)


def test_mean_and_percentile() -> None:
    assert mean([]) == 0.0 and mean([1.0, 2.0]) == 1.5
    assert percentile([], 50) == 0.0
    values = [float(x) for x in range(1, 101)]
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 95) == pytest.approx(95.05)


def test_latency_percentiles_in_milliseconds_are_one_helper_for_every_bench() -> None:
    assert percentile_ms([], 50) is None  # no queries: no figure, not a zero or a NaN
    assert percentile_ms([0.010, 0.020, 0.030], 50) == 20.0
    assert percentile_ms([0.01234, 0.01234], 95) == 12.3


def test_the_ceiling_is_each_questions_best_single_passage() -> None:
    """A hit needs 3 of the answer's 4 content words in one passage: the question whose words
    are split over two passages cannot be a hit for any ranking, and the ceiling says so."""
    from pathlib import Path

    from terag_bench.datasets import Dataset, Question
    from terag_bench.runs import Scorer

    from terag_neo4j.core.documents import Passage

    def passage(pid: str, text: str) -> Passage:
        return Passage(pid, "doc", 0, "", text)

    passages = [
        passage("a", "Marla hid the silver key"),
        passage("b", "under the garden stone; later"),
        passage("c", "Marla buried silver coins beneath the oak tree"),
    ]
    questions = [
        Question("split", "where was the key?", ("silver key garden stone",), ()),
        Question("whole", "what did Marla bury?", ("Marla buried silver coins",), ()),
    ]
    dataset = Dataset("toy", Path("."), [], questions, None, kind="coverage")
    run = Scorer(dataset, passages).ceiling(questions)
    got = {q.id: (q.retrieved, q.scores["hit@5"], q.scores["cov@5"]) for q in run.questions}
    assert got["whole"] == (["c"], 1.0, 1.0)
    assert got["split"][1:] == (0.0, 0.5)
    assert run.scores()["hit@5"] == 0.5
