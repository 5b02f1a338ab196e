"""Per-question wins and losses of each method against the flat baselines a user already has:
dense retrieval and BM25 + dense fused by reciprocal rank (the `flat` row), and against the
walk's own order (the `walk_order` row: what a final ranking changes).

A mean hides a method that is better on some questions and worse on as many others; the count of
questions where it scores higher and lower than the baseline shows it. Computed from the bench
JSON's per-question scores, so older results get the table too.
"""

from __future__ import annotations

from typing import Any

# The baselines every method is compared with, by the row that measures each.
BASES = ("dense", "flat", "walk")


def _base_rows(result: dict[str, Any]) -> dict[str, str]:
    """Baseline name -> the method row that measures it (`flat` is a TERAG row, e.g.
    `terag-spacy/flat`; the first one found)."""
    rows: dict[str, str] = {}
    for name, s in result["methods"].items():
        if name == "dense":
            rows.setdefault("dense", name)
        elif s.get("variant") == "flat":
            rows.setdefault("flat", name)
        elif s.get("variant") == "walk_order":
            rows.setdefault("walk", name)
    return rows


def _metrics(result: dict[str, Any]) -> list[str]:
    first: dict[str, Any] = next(iter(result["methods"].values()), {})
    return [m for m in first.get("scores") or {} if m.startswith(("R@", "hit@"))]


def versus(result: dict[str, Any]) -> dict[str, Any]:
    """{method: {baseline: {metric: [wins, losses]}}} over the questions both answered."""
    bases = _base_rows(result)
    metrics = _metrics(result)
    per = {
        name: {q["id"]: q["scores"] for q in s.get("per_question") or []}
        for name, s in result["methods"].items()
    }
    out: dict[str, Any] = {}
    for name in result["methods"]:
        if name == "ceiling":
            continue
        row: dict[str, Any] = {}
        for base, base_name in bases.items():
            if base_name == name:
                continue
            ours, theirs = per[name], per[base_name]
            shared = [q for q in ours if q in theirs]
            row[base] = {
                m: [
                    sum(ours[q][m] > theirs[q][m] for q in shared),
                    sum(ours[q][m] < theirs[q][m] for q in shared),
                ]
                for m in metrics
            }
        if row:
            out[name] = row
    return out


def versus_table(result: dict[str, Any]) -> str | None:
    """Markdown: one row per method, `+wins/-losses` against each baseline per metric."""
    table = result.get("versus") or versus(result)
    if not table:
        return None
    metrics = _metrics(result)
    bases = [b for b in BASES if b in _base_rows(result)]
    head = "| method | " + " | ".join(f"vs {b} {m}" for b in bases for m in metrics) + " |"
    rows = [head, "|---|" + "---:|" * (len(bases) * len(metrics))]
    for name, row in table.items():
        cells = [
            f"+{row[b][m][0]}/-{row[b][m][1]}" if b in row and m in row[b] else "-"
            for b in bases
            for m in metrics
        ]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    rows.append("")
    rows.append(
        "Questions where the method scores higher (+) and lower (-) than the baseline "
        "(dense; flat = BM25 + dense by reciprocal rank; walk = the walk's order)."
    )
    return "\n".join(rows)
