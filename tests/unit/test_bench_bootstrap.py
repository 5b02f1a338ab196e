"""The paired bootstrap interval of `terag bench --answers` on hand-checkable scores."""

from __future__ import annotations

import pytest
from terag_bench.answers import differences, reference_method
from terag_bench.bootstrap import paired_bootstrap
from terag_bench.outputs import answers_table


def test_identical_methods_differ_by_zero_with_no_spread() -> None:
    scores = [1.0, 0.0, 0.5, 1.0, 0.0]
    iv = paired_bootstrap(scores, scores)
    assert iv is not None
    assert (iv.observed, iv.low, iv.high) == (0.0, 0.0, 0.0)


def test_always_right_against_never_right_is_a_full_difference() -> None:
    iv = paired_bootstrap([100.0] * 30, [0.0] * 30)
    assert iv is not None
    assert (iv.observed, iv.low, iv.high) == (100.0, 100.0, 100.0)


def test_the_interval_holds_the_observed_difference_and_is_reproducible() -> None:
    a = [1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0] * 5
    b = [0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0] * 5
    iv = paired_bootstrap(a, b)
    assert iv is not None
    assert iv.observed == pytest.approx(0.2)
    assert iv.low < iv.observed < iv.high
    # 50 pairs whose differences are 1 (15), -1 (5) and 0 (30): the standard error of the mean
    # difference is 0.6 / sqrt(50) = 0.085, so the interval is about 0.2 +- 0.17.
    assert 0.0 < iv.low < 0.1 and 0.3 < iv.high < 0.4
    assert paired_bootstrap(a, b) == iv  # the fixed seed


def test_no_pairs_and_unpaired_scores() -> None:
    assert paired_bootstrap([], []) is None
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap([1.0], [1.0, 0.0])


def test_the_default_terag_row_is_the_reference_and_every_other_is_compared() -> None:
    assert reference_method(["bm25", "terag-spacy/flat", "terag-spacy", "dense"]) == "terag-spacy"
    assert reference_method(["bm25", "dense"]) == "bm25"
    rows = {
        "bm25": [{"em": 0, "f1": 0.0}, {"em": 0, "f1": 0.5}],
        "terag-spacy": [{"em": 1, "f1": 1.0}, {"em": 1, "f1": 1.0}],
        "terag-spacy/flat": [{"em": 1, "f1": 1.0}, {"em": 1, "f1": 1.0}],
    }
    d = differences(rows)
    assert d["reference"] == "terag-spacy"
    assert set(d["methods"]) == {"bm25", "terag-spacy/flat"}
    assert d["methods"]["bm25"]["em"] == {"observed": 100.0, "low": 100.0, "high": 100.0}
    assert d["methods"]["bm25"]["f1"]["observed"] == 75.0
    assert d["methods"]["terag-spacy/flat"]["f1"] == {"observed": 0.0, "low": 0.0, "high": 0.0}
    table = answers_table({"answers": {"methods": {}, "differences": d}})
    assert table is not None
    assert "| bm25 | +100.0 [+100.0, +100.0] |" in table
    assert "10,000 resamples" in table
