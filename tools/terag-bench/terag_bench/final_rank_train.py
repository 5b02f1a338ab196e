"""`terag-bench final-rank-train`: the learned final ranking rebuilt from scratch, with its
leave-one-corpus-out table and its won/lost questions.

Reads `final-rank-features`' files (`OUT/final_rank/*.jsonl`). A candidate's label is 1 for a
gold passage, or for answer coverage of at least 0.75 on a set without gold passages. The model
is linear over `learned.FEATURES`, L2-regularised and fitted by Newton's method, each corpus
weighing the same and each question the same within it; questions with no good candidate teach
nothing and are left out of training (not of the table). Two losses: `pointwise` (logistic
regression on each candidate's label) and `pairwise` (logistic on the difference of a good and a
bad candidate of one question: RankNet's loss, which cares only for the order within a question).

Validation: the corpora are grouped as the data is drawn (MuSiQue and its training set are one
group, HotpotQA and its training set another; 2Wiki, medical, novel one each). Every figure on a
set comes from a model trained on the training questions of the other groups alone. The loss,
the L2 strength and the candidate pool (`GRID`) are the ones whose leave-one-corpus-out table
misses the fewest targets (each set and metric at least the best of BM25, dense and flat, and at
least the walk's order), then falls shortest of them, then has the best mean. The shipped file
is then trained on every group's training questions (`final_rank_data.split`), never a
kept-apart one.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)
# 0.01 was tried: nearly unpenalised, it fitted offsetting weights of +-10 and put a passage
# every channel ranks second above the one they all rank first.
L2_GRID = (0.1, 1.0, 10.0)
LOSSES = ("pointwise", "pairwise")
POOLS = ((20, 10), (20, 5), (10, 10), (20, 20))  # (walk, flat) candidates
HIT = 0.75
METHODS = ("bm25", "dense", "flat", "walk", "anchored", "learned")
VERSUS = ("dense", "flat", "walk")
Record = dict[str, Any]
Array = npt.NDArray[np.float64]
Table = dict[str, dict[str, dict[str, float]]]


@dataclass(frozen=True)
class Config:
    loss: str
    l2: float
    walk: int
    flat: int


GRID = tuple(
    Config(loss, l2, walk, flat)
    for loss, l2, (walk, flat) in itertools.product(LOSSES, L2_GRID, POOLS)
)


def corpus(dataset: str) -> str:
    """The group a set belongs to: a set and its training set are drawn from one corpus."""
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


@dataclass
class Question:
    """One question's candidates for one pool: their features and labels, the walk's order, and
    the baselines' scores (`baselines`)."""

    rec: Record
    nodes: list[int]
    x: Array
    y: Array
    walk: list[int]
    base: dict[str, dict[str, float]]


def baselines(rec: Record) -> tuple[list[int], dict[str, dict[str, float]]]:
    """The walk's order and each baseline method's scores for one question."""
    from terag_neo4j.retrieval.final_rank import anchor_node, rrf_nodes
    from terag_neo4j.retrieval.learned import Inputs

    x = Inputs.from_json(rec["inputs"])
    text, vector, walk = [n for n, _ in x.text], [n for n, _ in x.vector], [n for n, _ in x.walk]
    anchor = anchor_node(text, vector)
    anchored = walk if anchor is None else [anchor, *(n for n in walk if n != anchor)]
    ranked = {
        "bm25": text,
        "dense": vector,
        "flat": [n for n, _ in rrf_nodes(text, vector)],
        "walk": walk,
        "anchored": anchored,
    }
    return walk, {m: scores(rec, r) for m, r in ranked.items()}


def prepare(sets: dict[str, list[Record]], walk: int, flat: int) -> dict[str, list[Question]]:
    """Every question with a final stage (fallbacks left out), its candidates from the pool."""
    from terag_neo4j.retrieval.learned import Inputs, features

    out: dict[str, list[Question]] = {}
    for name, recs in sets.items():
        qs = out.setdefault(name, [])
        for rec in recs:
            if "inputs" not in rec:
                continue
            nodes, rows = features(Inputs.from_json(rec["inputs"]), walk, flat)
            y = np.asarray([_label(rec, n) for n in nodes], dtype=np.float64)
            order, base = baselines(rec)
            qs.append(Question(rec, nodes, np.asarray(rows, dtype=np.float64), y, order, base))
    return out


def design(
    questions: dict[str, list[Question]], names: Sequence[str], loss: str
) -> tuple[Array, Array, Array]:
    """Rows, labels and weights of the training questions of `names`: each group weighs the
    same, each question the same within it. Pairwise: a row per (good, bad) pair of a question,
    their difference, label 1, and its negation, label 0."""
    by_corpus: dict[str, list[Question]] = {}
    for name in names:
        for q in questions[name]:
            if (
                q.rec["split"] == "train"
                and q.y.sum() > 0
                and (loss == "pointwise" or q.y.min() == 0)
            ):
                by_corpus.setdefault(corpus(name), []).append(q)
    xs: list[Array] = []
    ys: list[Array] = []
    ws: list[Array] = []
    for qs in by_corpus.values():
        for q in qs:
            if loss == "pointwise":
                x, y = q.x, q.y
            else:
                good, bad = q.x[q.y > 0], q.x[q.y == 0]
                diff = (good[:, None, :] - bad[None, :, :]).reshape(-1, q.x.shape[1])
                x, y = np.vstack([diff, -diff]), np.r_[np.ones(len(diff)), np.zeros(len(diff))]
            xs.append(x)
            ys.append(y)
            ws.append(np.full(len(y), 1.0 / (len(qs) * len(y))))
    if not xs:
        raise SystemExit("no training question with a good candidate: run final-rank-features")
    w = np.concatenate(ws)
    return np.vstack(xs), np.concatenate(ys), w / w.sum()


def fit(x: Array, y: Array, w: Array, l2: float) -> list[float]:
    """Weighted logistic regression by Newton's method; the bias (last column) unpenalised."""
    d = x.shape[1]
    beta = np.zeros(d)
    pen = np.full(d, l2 / max(len(y), 1) * 1.0)
    pen[-1] = 0.0
    for _ in range(25):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (p - y)) + pen * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(pen) + 1e-9 * np.eye(d)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if float(np.abs(step).max()) < 1e-6:
            break
    return [float(b) for b in beta]


def learned_order(q: Question, weights: Sequence[float]) -> list[int]:
    """The learned ranking as `Model.rank` orders it (best score first, ties in candidate
    order), the walk's order past the candidates."""
    s = q.x @ np.asarray(weights)
    top = [q.nodes[i] for i in sorted(range(len(s)), key=lambda i: (-s[i], i))]
    chosen = set(top)
    return top + [n for n in q.walk if n not in chosen]


def scores(rec: Record, ranking: Sequence[int]) -> dict[str, float]:
    if rec["kind"] == "coverage":
        return {"hit@5": float(any(_label(rec, n) for n in ranking[:5]))}
    gold = max(int(rec["gold"]), 1)
    return {f"R@{k}": sum(_label(rec, n) for n in ranking[:k]) / gold for k in (2, 5)}


def evaluate(
    questions: Sequence[Question], weights: Sequence[float] | None, keep: Callable[[Record], bool]
) -> dict[str, dict[str, float]]:
    """Mean scores per method over the questions `keep` selects, and the learned ranking's
    questions won (`+dense`) and lost (`-dense`) against each of `VERSUS`, per metric."""
    sums: dict[str, dict[str, float]] = {}
    n = 0
    for q in questions:
        if not keep(q.rec):
            continue
        n += 1
        got = dict(q.base)
        if weights is not None:
            got["learned"] = scores(q.rec, learned_order(q, weights))
        for method, metrics in got.items():
            for metric, v in metrics.items():
                sums.setdefault(method, {}).setdefault(metric, 0.0)
                sums[method][metric] += v
        if "learned" in got:
            counts = sums.setdefault("versus", {})
            for other, metric in itertools.product(VERSUS, got["learned"]):
                d = got["learned"][metric] - got[other][metric]
                for sign, hit in (("+", d > 1e-9), ("-", d < -1e-9)):
                    key = f"{sign}{other} {metric}"
                    counts[key] = counts.get(key, 0.0) + hit
    out = {
        m: {k: (v if m == "versus" else 100 * v / max(n, 1)) for k, v in s.items()} | {"n": n}
        for m, s in sums.items()
    }
    return out


def loco(questions: dict[str, list[Question]], cfg: Config) -> Table:
    table = {}
    for name in questions:
        others = [s for s in questions if corpus(s) != corpus(name)]
        x, y, w = design(questions, others, cfg.loss)
        weights = fit(x, y, w, cfg.l2)
        table[name] = evaluate(questions[name], weights, lambda r: True)
    return table


def metrics_of(t: dict[str, dict[str, float]]) -> list[str]:
    return [k for k in t["learned"] if k != "n"]


def shortfalls(table: Table) -> list[float]:
    """How far the learned ranking falls below each target (0 where it meets it): per set and
    metric, the best of BM25, dense and flat, and the walk's order."""
    out = []
    for t in table.values():
        for k in metrics_of(t):
            bar = max(t[m][k] for m in ("bm25", "dense", "flat", "walk"))
            out.append(max(bar - t["learned"][k], 0.0))
    return out


def rank_key(table: Table) -> tuple[int, float, float]:
    """Fewest targets missed, then the least shortfall, then the best mean."""
    short = shortfalls(table)
    vals = [t["learned"][k] for t in table.values() for k in metrics_of(t)]
    return (-sum(s > 0 for s in short), -float(sum(short)), float(np.mean(vals)) if vals else 0.0)


def markdown(table: Table) -> str:
    head = "| set | questions | " + " | ".join(METHODS) + " |"
    lines = [head, "|---|---:|" + "---:|" * len(METHODS)]
    for name, t in table.items():
        metrics = metrics_of(t)
        cells = [" / ".join(f"{t[m][k]:.1f}" for k in metrics) for m in METHODS]
        lines.append(
            f"| {name} ({'/'.join(metrics)}) | {int(t['learned']['n'])} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)


def versus_markdown(table: Table) -> str:
    """Questions the learned ranking won and lost against each of `VERSUS`, per metric."""
    lines = [
        "| set | " + " | ".join(f"vs {o}" for o in VERSUS) + " |",
        "|---|" + "---|" * len(VERSUS),
    ]
    for name, t in table.items():
        c = t["versus"]
        cells = [
            " ".join(f"+{int(c[f'+{o} {k}'])}/-{int(c[f'-{o} {k}'])}" for k in metrics_of(t))
            for o in VERSUS
        ]
        lines.append(f"| {name} ({'/'.join(metrics_of(t))}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scoring_ms(sets: dict[str, list[Record]], model: Any) -> str:
    """p50 / p95 of the model's ranking of one question's candidates, in milliseconds."""
    import time

    from terag_neo4j.retrieval.learned import Inputs

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
    from terag_neo4j.retrieval.learned import FEATURES, FORMAT, Model

    sets = load(args.out / "final_rank")
    if not sets:
        raise SystemExit(
            f"no final-rank features under {args.out / 'final_rank'}: run final-rank-features"
        )
    pools = {(c.walk, c.flat): prepare(sets, c.walk, c.flat) for c in GRID}
    runs = {cfg: loco(pools[cfg.walk, cfg.flat], cfg) for cfg in GRID}
    for cfg, table in runs.items():
        missed, short, mean = rank_key(table)
        log.info("%s: %d targets missed, %.2f points short, mean %.2f", cfg, -missed, -short, mean)
    best = max(runs, key=lambda c: rank_key(runs[c]))
    table = runs[best]
    missed, short, _ = rank_key(table)
    print(
        f"leave-one-corpus-out ({best.loss} loss, L2 {best.l2}, candidates: the walk's top "
        f"{best.walk} and each flat ranking's top {best.flat}; each set's figures from a model "
        "that never saw its corpus):"
    )
    print(markdown(table))
    print(f"\ntargets missed: {-missed}, {-short:.1f} points short in all")
    print("\nquestions the learned ranking won / lost (R@2 then R@5, or hit@5):")
    print(versus_markdown(table))
    questions = pools[best.walk, best.flat]
    x, y, w = design(questions, list(questions), best.loss)
    weights = fit(x, y, w, best.l2)
    held = {
        name: evaluate(qs, weights, lambda r: r["split"] == "holdout")
        for name, qs in questions.items()
    }
    held = {k: v for k, v in held.items() if v and v.get("learned", {}).get("n")}
    print("\nthe shipped model on the kept-apart halves of the dev sets:")
    print(markdown(held) if held else "(no dev set among the features)")
    model = {
        "format": FORMAT,
        "version": "v2",
        "features": list(FEATURES),
        "weights": [round(v, 6) for v in weights],
        "loss": best.loss,
        "l2": best.l2,
        "candidates": {"walk": best.walk, "flat": best.flat},
        "trained_on": {
            name: sum(1 for q in qs if q.rec["split"] == "train") for name, qs in questions.items()
        },
        "loco": {
            name: {m: {k: round(v, 2) for k, v in s.items()} for m, s in t.items()}
            for name, t in table.items()
        },
    }
    shipped = Model.from_json(model)
    print(f"\nscoring the candidates (features + model, no read): {scoring_ms(sets, shipped)}")
    text = json.dumps(model, indent=1) + "\n"
    if args.model:
        args.model.write_text(text)
        print(f"wrote {args.model}")
    else:
        print(text)
    return 0
