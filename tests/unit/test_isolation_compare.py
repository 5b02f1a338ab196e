"""`terag bench-isolation`'s comparison of two sets of top-10 rankings."""

from __future__ import annotations

import pytest
from terag_bench.isolation import compare


def test_identical_rankings_count_no_change() -> None:
    rankings = [[("a", 0.5), ("b", 0.25)], [("c", 0.1)]]
    assert compare(rankings, rankings) == {
        "order_changed": 0,
        "members_changed": 0,
        "max_score_delta": 0.0,
    }


def test_order_membership_and_score_changes_are_counted_apart() -> None:
    before = [[("a", 0.5), ("b", 0.25)], [("c", 0.1), ("d", 0.05)], [("e", 0.2)]]
    after = [[("b", 0.3), ("a", 0.29)], [("c", 0.1), ("x", 0.05)], [("e", 0.2)]]
    got = compare(before, after)
    assert got["order_changed"] == 2  # swapped, and d replaced by x
    assert got["members_changed"] == 1  # only the second lost a passage
    assert got["max_score_delta"] == pytest.approx(0.21)  # a: 0.5 -> 0.29
