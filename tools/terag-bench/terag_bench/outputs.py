"""Bench outputs: one JSON per dataset, a Markdown summary and PNG plots over every dataset run.

Every dataset's JSON lands in the same out dir (`<dataset>.json`); after each run the summary
(`results.md`) and the plots are rebuilt from all JSON files there, so datasets run one at a
time still end up in one table and one figure.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from terag_bench.token_figures import pair
from terag_bench.versus import versus_table

log = logging.getLogger(__name__)

SUMMARY_MD = "results.md"
RECALL_PNG = "recall_at_5.png"
TOKENS_PNG = "recall_vs_index_tokens.png"


def write_json(result: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)  # a crash mid-write never leaves half a JSON behind
    return path


def load_results(out_dir: Path) -> list[dict[str, Any]]:
    results = []
    for p in sorted(out_dir.glob("*.json")):
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            log.warning("skipping %s: not valid JSON (%s)", p, e)
            continue
        if isinstance(data, dict) and "methods" in data and "dataset" in data:
            results.append(data)
    return results


def _pct(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _method_order(results: Sequence[dict[str, Any]]) -> list[str]:
    seen: list[str] = []
    for r in results:
        for m in r["methods"]:
            if m not in seen:
                seen.append(m)
    return seen


def recall_table(results: Sequence[dict[str, Any]]) -> str:
    """Methods as rows, datasets as column pairs (R@2 / R@5, percent)."""
    names = [
        r["dataset"]["name"] for r in results if r["dataset"].get("kind", "recall") == "recall"
    ]
    head = "| method | " + " | ".join(f"{n} R@2 | {n} R@5" for n in names) + " |"
    sep = "|---|" + "---:|---:|" * len(names)
    rows = [head, sep]
    for m in _method_order([r for r in results if r["dataset"].get("kind", "recall") == "recall"]):
        cells = []
        for r in results:
            if r["dataset"].get("kind", "recall") != "recall":
                continue
            rec = r["methods"].get(m, {}).get("recall")
            cells += [_pct(rec["2"]) if rec else "-", _pct(rec["5"]) if rec else "-"]
        rows.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _metric_names(result: dict[str, Any]) -> list[str]:
    first: dict[str, Any] = next(iter(result["methods"].values()), {})
    return list(first.get("scores") or {"R@2": 0, "R@5": 0})


def _scores(s: dict[str, Any]) -> dict[str, float]:
    # results written before scores were generic hold recall only
    return s.get("scores") or {f"R@{k}": v for k, v in (s.get("recall") or {}).items()}


def detail_table(result: dict[str, Any]) -> str:
    """One dataset: its scores (recall, or answer coverage and hits), the share of questions that
    linked a concept, latency, tokens and fallbacks per method."""
    names = _metric_names(result)
    rows = [
        f"| method | {' | '.join(names)} | linked | p50 ms | p95 ms | query tok in/out per q | "
        "index tok in/out | fallbacks |",
        "|---|" + "---:|" * (len(names) + 6),
    ]
    for m, s in result["methods"].items():
        qt, it = s["query_tokens"], s["index_tokens"]
        scores = _scores(s)
        linked = s.get("linked_share")
        rows.append(
            f"| {m} | {' | '.join(_pct(scores.get(n)) for n in names)} | "
            f"{_pct(linked) if linked is not None else '-'} | "
            f"{s['latency_ms']['p50']:.1f} | {s['latency_ms']['p95']:.1f} | "
            f"{pair(qt['input_per_query'], qt['output_per_query'])} | "
            f"{pair(it['input'], it['output'], 'd')} | {s['fallbacks']} |"
        )
    return "\n".join(rows)


def type_table(result: dict[str, Any]) -> str | None:
    """Scores per question type (methods as rows), where questions have types."""
    types = sorted({t for s in result["methods"].values() for t in (s.get("by_type") or {})})
    if not types:
        return None
    names = _metric_names(result)
    head = "| method | " + " | ".join(f"{t} {n}" for t in types for n in names) + " |"
    rows = [head, "|---|" + "---:|" * (len(types) * len(names))]
    for m, s in result["methods"].items():
        by = s.get("by_type") or {}
        cells = [_pct(by.get(t, {}).get(n)) for t in types for n in names]
        rows.append(f"| {m} | " + " | ".join(cells) + " |")
    counts = {
        t: next(
            (
                s["by_type"][t]["questions"]
                for s in result["methods"].values()
                if t in (s.get("by_type") or {})
            ),
            0,
        )
        for t in types
    }
    rows.append("")
    rows.append("Questions per type: " + ", ".join(f"{t} {n}" for t, n in counts.items()) + ".")
    return "\n".join(rows)


def indexing_table(result: dict[str, Any]) -> str:
    rows = [
        "| extractor | passages | concepts | entities | HAS_PASSAGE | CO_OCCURRENCE | tok in/out "
        "per passage | index s | passages/s | measured in |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for ext, ix in result.get("indexing", {}).items():
        t = ix["tokens"]
        rows.append(
            f"| {ext} | {ix['passages']} | {ix['concepts']} | {ix['entities']} | {ix['has_passage']} | "
            f"{ix['co_occurrence']} | {pair(t['input_per_passage'], t['output_per_passage'])} | "
            f"{ix['index_s']:.1f} | {ix['throughput_passages_per_s']:.1f} | {ix['throughput_source']} |"
        )
    return "\n".join(rows)


def answers_table(result: dict[str, Any]) -> str | None:
    ans = result.get("answers")
    if not ans:
        return None
    if "skipped" in ans:
        return f"Answers: {ans['skipped']}"
    rows = [
        "| method | questions | EM | F1 | reader tok in/out per q |",
        "|---|---:|---:|---:|---:|",
    ]
    for m, a in ans.get("methods", {}).items():
        t = a["tokens"]
        rows.append(
            f"| {m} | {a.get('questions', '')} | {_pct(a['em'])} | {_pct(a['f1'])} | "
            f"{pair(t['input_per_query'], t['output_per_query'])} |"
        )
    rows += _difference_rows(ans.get("differences"))
    if "questions_answered" in ans:
        rows.append("")
        rows.append(
            f"Reader {ans['model']}: {ans['questions_answered']} of {ans['questions_total']} "
            f"questions answered by every method; {ans['calls_fresh']} new calls "
            f"({ans['seconds_per_fresh_call']:.1f} s each), {ans['calls_cached']} from the cache."
        )
    return "\n".join(rows)


def _interval(d: dict[str, float] | None) -> str:
    if d is None:
        return "n/a"
    return f"{d['observed']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]"


def _difference_rows(diffs: dict[str, Any] | None) -> list[str]:
    """The reference method minus each other one, with its paired bootstrap interval."""
    if not diffs or not diffs.get("methods"):
        return []
    level = round(100 * diffs["level"])
    rows = [
        "",
        f"{diffs['reference']} minus each method, percentage points [paired bootstrap {level} % "
        f"interval, {diffs['resamples']:,} resamples, seed {diffs['seed']}]:",
        "",
        "| minus | EM | F1 |",
        "|---|---:|---:|",
    ]
    for m, d in diffs["methods"].items():
        rows.append(f"| {m} | {_interval(d['em'])} | {_interval(d['f1'])} |")
    return rows


def markdown_report(results: Sequence[dict[str, Any]]) -> str:
    parts = [
        "# terag bench results",
        "",
        "Recall@k in percent (HippoRAG's definition).",
        "",
        recall_table(results),
        "",
    ]
    for r in results:
        d = r["dataset"]
        parts += [
            f"## {d['name']}",
            "",
            f"{d['passages']} passages{' (cut down)' if d['subset'] else ''}, "
            f"{d['questions']} questions; total {r['timings_s'].get('total_s', 0):.1f} s, "
            f"load average {r['environment'].get('loadavg_start')} -> {r['environment'].get('loadavg_end')} "
            f"on {r['environment'].get('cpus')} CPUs.",
            "",
            detail_table(r),
            "",
        ]
        vs = versus_table(r)
        if vs:
            parts += [vs, ""]
        types = type_table(r)
        if types:
            parts += [types, ""]
        if r.get("indexing"):
            parts += [indexing_table(r), ""]
        ans = answers_table(r)
        if ans:
            parts += [ans, ""]
        parts += [f"- {n}" for n in r.get("notes", [])]
    return "\n".join(parts).rstrip() + "\n"


def plot_recall(results: Sequence[dict[str, Any]], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = _method_order(results)
    names = [r["dataset"]["name"] for r in results]
    width = 0.8 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(names) + 0.35 * len(methods)), 4.8))
    cmap = plt.get_cmap("tab20")
    for i, m in enumerate(methods):
        ys = [100 * r["methods"][m]["recall"]["5"] if m in r["methods"] else 0.0 for r in results]
        xs = [j + (i - (len(methods) - 1) / 2) * width for j in range(len(names))]
        ax.bar(xs, ys, width, label=m, color=cmap(i % 20))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=15, ha="right")
    ax.set_ylabel("Recall@5 (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Recall@5 per method and dataset")
    ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_recall_vs_tokens(results: Sequence[dict[str, Any]], path: Path) -> Path:
    """TERAG's Figure 3 axes: Recall@5 against the output tokens spent building the index."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    markers = "osD^v<>ph*"
    cmap = plt.get_cmap("tab10")
    for j, r in enumerate(results):
        for i, (m, s) in enumerate(r["methods"].items()):
            if s["variant"] not in (None, "terag"):
                continue  # ablations share their graph's tokens; the figure compares methods
            x = s["index_tokens"]["output"]
            if x is None:
                continue  # an unknown count has no place on the axis (the tables say unknown)
            y = 100 * s["recall"]["5"]
            ax.scatter([x], [y], color=cmap(j % 10), marker=markers[i % len(markers)], s=50)
            ax.annotate(m, (x, y), fontsize=7, xytext=(4, 3), textcoords="offset points")
        ax.scatter([], [], color=cmap(j % 10), label=r["dataset"]["name"])
    xmax = max(
        (
            x
            for r in results
            for s in r["methods"].values()
            if (x := s["index_tokens"]["output"]) is not None
        ),
        default=0,
    )
    ax.set_xscale("symlog", linthresh=1000)
    # Graphs built without an LLM sit at 0; keep them off the left edge.
    ax.set_xlim(-300, max(10 * xmax, 10_000))
    ax.set_xlabel("indexing output tokens (symlog; 0 = no LLM)")
    ax.set_ylabel("Recall@5 (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Recall@5 vs. indexing output tokens")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_summary(out_dir: Path, plots: bool = True) -> list[Path]:
    results = load_results(out_dir)
    if not results:
        return []
    written = [out_dir / SUMMARY_MD]
    (out_dir / SUMMARY_MD).write_text(markdown_report(results), encoding="utf-8")
    results = [r for r in results if r["dataset"].get("kind", "recall") == "recall"]
    if plots and results:
        written.append(plot_recall(results, out_dir / RECALL_PNG))
        written.append(plot_recall_vs_tokens(results, out_dir / TOKENS_PNG))
    return written
