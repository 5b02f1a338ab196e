"""`terag-bench final-rank-train`: the learned final ranking rebuilt from scratch, with its
leave-one-corpus-out table.

Reads `final-rank-features`' files (`OUT/final_rank/*.jsonl`). A candidate's label is 1 for a
gold passage, or for answer coverage of at least 0.75 on a set without gold passages. The model
is L2-regularised logistic regression over `learned.FEATURES` (Newton's method, a few
iterations), each corpus weighing the same and each question the same within it; questions
with no good candidate teach nothing and are left out of training (not of the table).

Validation: the corpora are grouped as the data is drawn (MuSiQue and its training set are one
corpus, HotpotQA and its training set another; 2Wiki, medical, novel one each). Every figure on a
set comes from a model trained on the training questions of the other corpora alone. The L2
strength is the one of `L2_GRID` with the best mean over those figures. The shipped file is then
trained on every corpus's training questions (`final_rank_data.split`), never a kept-apart one.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)
L2_GRID = (0.01, 0.1, 1.0, 10.0)
HIT = 0.75
METHODS = ("bm25", "dense", "flat", "walk", "anchored", "learned")
Record = dict[str, Any]


def corpus(dataset: str) -> str:
    """The corpus a set's passages are drawn from: its training set is the same corpus."""
    return dataset.removesuffix("_hipporag_train100")


def register_cli(subparsers: Any) -> None:
    from terag_bench.subcommands import COMMANDS

    s = subparsers.add_parser(
        "bench-final-rank-train",
        help=COMMANDS["bench-final-rank-train"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("--out", type=Path, default=Path("bench") / "results")
    s.add_argument(
        "--model", type=Path, help="where to write the model (default: print it, write nothing)"
    )
    s.set_defaults(func=cmd_train)


def load(folder: Path) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        with path.open() as f:
            out[path.stem] = [json.loads(line) for line in f if line.strip()]
    return out


def _label(rec: Record, node: int) -> float:
    v = float(rec["labels"].get(str(node), 0.0))
    return float(v >= HIT) if rec["kind"] == "coverage" else v


def design(
    sets: dict[str, list[Record]], names: Sequence[str]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Rows, labels and weights of the training questions of `names`."""
    from terag_neo4j.retrieval.learned import Inputs, features

    xs: list[list[float]] = []
    ys: list[float] = []
    ws: list[float] = []
    by_corpus: dict[str, list[tuple[list[list[float]], list[float]]]] = {}
    for name in names:
        for rec in sets[name]:
            if "inputs" not in rec or rec["split"] != "train":
                continue
            nodes, rows = features(Inputs.from_json(rec["inputs"]))
            y = [_label(rec, n) for n in nodes]
            if sum(y) > 0:
                by_corpus.setdefault(corpus(name), []).append((rows, y))
    for questions in by_corpus.values():
        for rows, y in questions:
            w = 1.0 / (len(questions) * len(rows))
            xs += rows
            ys += y
            ws += [w] * len(rows)
    return np.asarray(xs), np.asarray(ys), np.asarray(ws) / max(sum(ws), 1e-12)


def fit(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], w: npt.NDArray[np.float64], l2: float
) -> list[float]:
    """Weighted logistic regression by Newton's method; the bias (last column) unpenalised."""
    d = x.shape[1]
    beta = np.zeros(d)
    pen = np.full(d, l2 / max(len(y), 1) * 1.0)
    pen[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (p - y)) + pen * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(pen) + 1e-9 * np.eye(d)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return [float(b) for b in beta]


def orders(rec: Record, weights: Sequence[float] | None) -> dict[str, list[int]]:
    """Each method's ranking of node ids for one question."""
    from terag_neo4j.retrieval.final_rank import anchor_node, rrf_nodes
    from terag_neo4j.retrieval.learned import Inputs, Model

    x = Inputs.from_json(rec["inputs"])
    text, vector, walk = [n for n, _ in x.text], [n for n, _ in x.vector], [n for n, _ in x.walk]
    anchor = anchor_node(text, vector)
    anchored = walk if anchor is None else [anchor, *(n for n in walk if n != anchor)]
    out = {
        "bm25": text,
        "dense": vector,
        "flat": [n for n, _ in rrf_nodes(text, vector)],
        "walk": walk,
        "anchored": anchored,
    }
    if weights is not None:
        top = [n for n, _ in Model(tuple(weights)).rank(x)]
        out["learned"] = top + [n for n in walk if n not in set(top)]
    return out


def scores(rec: Record, ranking: Sequence[int]) -> dict[str, float]:
    if rec["kind"] == "coverage":
        return {"hit@5": float(any(_label(rec, n) for n in ranking[:5]))}
    gold = max(int(rec["gold"]), 1)
    return {f"R@{k}": sum(_label(rec, n) for n in ranking[:k]) / gold for k in (2, 5)}


def evaluate(
    recs: Sequence[Record], weights: Sequence[float] | None, keep: Callable[[Record], bool]
) -> dict[str, dict[str, float]]:
    """Mean scores per method over the records `keep` selects (fallbacks left out)."""
    sums: dict[str, dict[str, float]] = {}
    n = 0
    for rec in recs:
        if "inputs" not in rec or not keep(rec):
            continue
        n += 1
        for method, ranking in orders(rec, weights).items():
            for metric, v in scores(rec, ranking).items():
                sums.setdefault(method, {}).setdefault(metric, 0.0)
                sums[method][metric] += v
    return {m: {k: 100 * v / max(n, 1) for k, v in s.items()} | {"n": n} for m, s in sums.items()}


def loco(sets: dict[str, list[Record]], l2: float) -> dict[str, dict[str, dict[str, float]]]:
    table = {}
    for name in sets:
        others = [s for s in sets if corpus(s) != corpus(name)]
        x, y, w = design(sets, others)
        weights = fit(x, y, w, l2)
        table[name] = evaluate(sets[name], weights, lambda r: True)
    return table


def mean_gain(table: dict[str, dict[str, dict[str, float]]]) -> float:
    """The learned ranking's mean over sets and metrics."""
    vals = [v for t in table.values() for k, v in t["learned"].items() if k != "n"]
    return float(np.mean(vals)) if vals else 0.0


def markdown(table: dict[str, dict[str, dict[str, float]]]) -> str:
    head = "| set | questions | " + " | ".join(METHODS) + " |"
    lines = [head, "|---|---:|" + "---:|" * len(METHODS)]
    for name, t in table.items():
        metrics = [k for k in t["learned"] if k != "n"]
        cells = [" / ".join(f"{t[m][k]:.1f}" for k in metrics) for m in METHODS]
        lines.append(
            f"| {name} ({'/'.join(metrics)}) | {int(t['learned']['n'])} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)


def scoring_ms(sets: dict[str, list[Record]], weights: Sequence[float]) -> str:
    """p50 / p95 of the model's ranking of one question's candidates, in milliseconds."""
    import time

    from terag_neo4j.retrieval.learned import Inputs, Model

    model = Model(tuple(weights))
    spent = []
    for recs in sets.values():
        for rec in recs:
            if "inputs" in rec:
                x = Inputs.from_json(rec["inputs"])
                t = time.perf_counter()
                model.rank(x)
                spent.append((time.perf_counter() - t) * 1000)
    if not spent:
        return "no questions"
    p50, p95 = np.percentile(spent, [50, 95])
    return f"p50 {p50:.3f} ms, p95 {p95:.3f} ms over {len(spent)} questions"


def cmd_train(args: argparse.Namespace) -> int:
    from terag_neo4j.retrieval.learned import FEATURES, FORMAT

    sets = load(args.out / "final_rank")
    if not sets:
        raise SystemExit(
            f"no final-rank features under {args.out / 'final_rank'}: run final-rank-features"
        )
    runs = {l2: loco(sets, l2) for l2 in L2_GRID}
    for l2, table in runs.items():
        log.info("l2 %s: mean learned %.2f", l2, mean_gain(table))
    best = max(runs, key=lambda l2: mean_gain(runs[l2]))
    table = runs[best]
    print(
        f"leave-one-corpus-out (L2 {best}; each set's figures from a model that never saw its corpus):"
    )
    print(markdown(table))
    x, y, w = design(sets, list(sets))
    weights = fit(x, y, w, best)
    held = {
        name: evaluate(recs, weights, lambda r: r["split"] == "holdout")
        for name, recs in sets.items()
    }
    held = {k: v for k, v in held.items() if v and v["learned"]["n"]}
    print("\nthe shipped model on the kept-apart halves of the dev sets:")
    print(markdown(held) if held else "(no dev set among the features)")
    model = {
        "format": FORMAT,
        "version": "v1",
        "features": list(FEATURES),
        "weights": [round(v, 6) for v in weights],
        "l2": best,
        "trained_on": {
            name: sum(1 for r in recs if r.get("split") == "train" and "inputs" in r)
            for name, recs in sets.items()
        },
        "loco": {
            name: {m: {k: round(v, 2) for k, v in s.items()} for m, s in t.items()}
            for name, t in table.items()
        },
    }
    print(f"\nscoring the candidates (features + model, no read): {scoring_ms(sets, weights)}")
    text = json.dumps(model, indent=1) + "\n"
    if args.model:
        args.model.write_text(text)
        print(f"wrote {args.model}")
    else:
        print(text)
    return 0
