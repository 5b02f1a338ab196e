"""Per-question wins and losses against dense and flat RRF in the bench report (no services)."""

import copy
from typing import Any

from terag_bench.outputs import markdown_report
from terag_bench.versus import versus, versus_table


def row(variant: str | None, scores: list[tuple[float, float]]) -> dict[str, Any]:
    per = [{"id": f"q{i}", "scores": {"R@2": a, "R@5": b}} for i, (a, b) in enumerate(scores)]
    return {"variant": variant, "scores": {"R@2": 0.0, "R@5": 0.0}, "per_question": per}


RESULT: dict[str, Any] = {
    "methods": {
        "dense": row(None, [(1, 1), (0, 1), (0.5, 0.5)]),
        "terag-spacy": row("terag", [(1, 1), (1, 1), (0, 1)]),
        "terag-spacy/flat": row("flat", [(0, 1), (0, 0), (0.5, 0.5)]),
    }
}


def test_wins_and_losses_are_counted_per_question_against_dense_and_flat() -> None:
    vs = versus(RESULT)
    assert vs["terag-spacy"]["dense"] == {"R@2": [1, 1], "R@5": [1, 0]}
    assert vs["terag-spacy"]["flat"] == {"R@2": [2, 1], "R@5": [2, 0]}
    assert "dense" not in vs["dense"] and "flat" not in vs["terag-spacy/flat"]


def test_the_table_prints_plus_wins_minus_losses_and_the_report_carries_it() -> None:
    table = versus_table(RESULT)
    assert table is not None
    assert "| vs dense R@2 | vs dense R@5 | vs flat R@2 | vs flat R@5 |" in table
    assert "| terag-spacy | +1/-1 | +1/-0 | +2/-1 | +2/-0 |" in table
    full = {
        **copy.deepcopy(RESULT),
        "dataset": {"name": "x", "passages": 3, "questions": 3, "subset": False},
        "timings_s": {},
        "environment": {},
        "config": {},
    }
    for s in full["methods"].values():
        s |= {
            "recall": {"2": 0.0, "5": 0.0},
            "latency_ms": {"p50": 1.0, "p95": 1.0},
            "query_tokens": {"input_per_query": 0.0, "output_per_query": 0.0},
            "index_tokens": {"input": 0, "output": 0},
            "fallbacks": 0,
        }
    assert "| terag-spacy | +1/-1 | +1/-0 | +2/-1 | +2/-0 |" in markdown_report([full])


def test_a_walk_order_row_is_the_walk_baseline() -> None:
    result = copy.deepcopy(RESULT)
    result["methods"]["terag-spacy/walk_order"] = row("walk_order", [(0, 1), (1, 1), (0, 0)])
    vs = versus(result)
    assert vs["terag-spacy"]["walk"] == {"R@2": [1, 0], "R@5": [1, 0]}
    table = versus_table(result)
    assert table is not None and "| vs walk R@2 | vs walk R@5 |" in table
