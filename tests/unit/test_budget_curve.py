"""The budget curve's table and plot from a result (no services)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from terag_bench.budget_curve import curve_table, write_curve


def _point(beta: float | None, total: int, r2: float, r5: float) -> dict[str, Any]:
    return {
        "label": str(beta),
        "beta": beta,
        "selection": None if beta is None else "pagerank",
        "merge": None if beta is None else "add",
        "core_passages": 0 if beta is None else round(10 * beta),
        "tokens": {"input": total, "output": 0, "total": total, "per_passage": total / 10},
        "recall": {"2": r2, "5": r5},
    }


RESULT: dict[str, Any] = {
    "kind": "budget_curve",
    "dataset": {"name": "toy", "passages": 10, "questions": 4, "subset": False},
    "extractor": "recorded",
    "model": "recorded",
    "top_k": 5,
    "tokens_rule": "cl100k",
    "points": [
        _point(0.0, 0, 0.5, 0.7),
        _point(0.2, 500, 0.55, 0.75),
        _point(1.0, 2000, 0.6, 0.8),
        _point(None, 1900, 0.58, 0.79),
    ],
}


def test_table_shows_tokens_as_a_share_of_the_full_budget() -> None:
    rows = curve_table(RESULT).splitlines()
    assert rows[0].startswith("| selection / merge | β |")
    beta_02 = next(r for r in rows if "| 0.2 |" in r)
    # 500 of β=1's 2000 tokens = 25 %; recall in percent
    assert "| 25.0 |" in beta_02 and "| 55.0 | 75.0 |" in beta_02
    assert any(r.startswith("| LLM only (no spaCy) | - |") for r in rows)


def test_write_curve_writes_json_markdown_and_png(tmp_path: Path) -> None:
    paths = write_curve(RESULT, tmp_path)
    assert [p.suffix for p in paths] == [".json", ".md", ".png"]
    assert all(p.parent == tmp_path / "budget" and p.stat().st_size > 0 for p in paths)
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
