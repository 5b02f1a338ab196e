"""`terag bench --budgets ...`: the cost-quality curve of budget mode.

For each selection rule and merge the dataset is indexed into one namespace (spaCy for every
passage), then the budgets are applied in increasing order, each topping the core up to ⌈β·N⌉
passages chosen by the rule on the graph as it is then (the way raising `--llm-budget` on a live
namespace works; a from-scratch index at β ranks on the pure spaCy graph instead), and after
each every question is retrieved with the project's default configuration. Each point records R@2 / R@5 and the extraction tokens of the
whole graph (the core passages' LLM extractions, as the cache holds them: server-reported for
Ollama, the reference prompt in cl100k_base for recorded extractions), also per corpus passage.
The plain LLM graph (the extractor on every passage, no spaCy) is measured beside it.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from terag_bench.bench import BenchConfig, BenchRunner
from terag_bench.datasets import Dataset, namespace_for
from terag_bench.runs import TOP_K
from terag_neo4j.config import Settings
from terag_neo4j.indexing.budget import Merge, Selection
from terag_neo4j.indexing.loading import to_passages

log = logging.getLogger(__name__)

BETAS = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0)
_RULE_CODE = {"pagerank": "pr", "degree": "dg", "knn_pagerank": "kn"}


@dataclass
class CurveConfig:
    betas: Sequence[float] = BETAS
    selections: Sequence[Selection] = ("pagerank",)
    merges: Sequence[Merge] = ("add",)
    extractor: str = "recorded"  # the LLM of the core passages: recorded or ollama
    reference: bool = True  # also the plain graph of `extractor` on every passage
    fresh: bool = False
    namespace_prefix: str = "bench"
    progress: bool = True
    points: list[dict[str, Any]] = field(default_factory=list)


def curve_namespace(dataset: Dataset, extractor: str, rule: str, merge: str, prefix: str) -> str:
    """One namespace per rule and merge: its budgets are run in increasing order, each one
    topping the core up (as raising `--llm-budget` on a live namespace does)."""
    return namespace_for(dataset, f"{extractor}_budget_{_RULE_CODE[rule]}_{merge}", prefix)


def run_budget_curve(settings: Settings, dataset: Dataset, cfg: CurveConfig) -> dict[str, Any]:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.store import NamespaceNotFound

    runner = BenchRunner(settings, dataset, BenchConfig(methods=["terag"], progress=cfg.progress))
    passages = list(
        to_passages(dataset.documents, runner.settings.chunk_tokens, runner.settings.chunk_overlap)
    )
    n = len(passages)
    betas = sorted(set(cfg.betas))
    plan: list[tuple[str, str, float | None]] = [
        (rule, merge, beta) for rule in cfg.selections for merge in cfg.merges for beta in betas
    ]
    if cfg.reference:
        plan.append(("-", "-", None))
    t0 = time.perf_counter()
    for rule, merge, beta in plan:
        over: dict[str, Any] = runner._client_overrides(cfg.extractor)
        if beta is None:
            ns = namespace_for(dataset, cfg.extractor, cfg.namespace_prefix)
        else:
            ns = curve_namespace(dataset, cfg.extractor, rule, merge, cfg.namespace_prefix)
            over |= {"llm_budget": beta, "budget_selection": rule, "budget_merge": merge}
        # budget mode refuses a spaCy `extractor` setting; the recorded replay handed in is the LLM
        settings = runner.settings.with_overrides(extractor="ollama")
        with TeragClient(settings, namespace=ns, **over) as client:
            if cfg.fresh and (beta is None or beta == betas[0]):
                with contextlib.suppress(NamespaceNotFound):
                    client.drop(ns)
            t = time.perf_counter()
            report = client.index(dataset.documents, namespace=ns, progress=cfg.progress)
            index_s = time.perf_counter() - t
            _, core = client.store.budget.core_state(ns)
            ext = client.extractor
            counted = passages if beta is None else [p for p in passages if p.id in core]
            keys = [client.cache.key(p.hash, ext.name, ext.model, ext.version) for p in counted]
            hits = client.cache.get_many(keys)
            # the bench's extractions are Ollama's, which always counts
            tin = sum(v[1] or 0 for v in hits.values())
            tout = sum(v[2] or 0 for v in hits.values())
            label = "LLM only" if beta is None else f"{rule}/{merge} β={beta:g}"
            run = runner._run_terag(client, ns, label, cfg.extractor, "terag")
            s = run.summary((tin, tout))
            point = {
                "label": label,
                "namespace": ns,
                "selection": None if beta is None else rule,
                "merge": None if beta is None else merge,
                "beta": beta,
                "core_passages": len(counted),
                "llm_extractions_found": len(hits),
                "passages": n,
                "tokens": {
                    "input": tin,
                    "output": tout,
                    "total": tin + tout,
                    "per_passage": round((tin + tout) / n, 2) if n else 0.0,
                },
                "recall": s["recall"],
                "latency_ms_p50": s["latency_ms"]["p50"],
                "index_s_this_run": round(index_s, 2),
                "this_run": report.to_record(),
                "per_question": s["per_question"],
            }
            cfg.points.append(point)
            log.info(
                "%s: R@2 %.3f R@5 %.3f, %d tokens (%.1f per passage), %d core",
                label,
                s["recall"]["2"],
                s["recall"]["5"],
                tin + tout,
                point["tokens"]["per_passage"],
                len(counted),
            )
    return {
        "kind": "budget_curve",
        "dataset": {
            "name": dataset.name,
            "passages": n,
            "questions": len(dataset.questions),
            "subset": dataset.subset,
        },
        "extractor": cfg.extractor,
        "model": runner.settings.llm_model if cfg.extractor == "ollama" else "recorded",
        "top_k": TOP_K,
        "tokens_rule": (
            "server-reported prompt_eval_count + eval_count"
            if cfg.extractor == "ollama"
            else "HippoRAG's one-shot NER prompt and the recorded JSON answer, cl100k_base "
            "(bpe-openai), OpenAI chat overhead; see terag_neo4j/indexing/extraction/reference_tokens.py"
        ),
        "points": cfg.points,
        "total_s": round(time.perf_counter() - t0, 1),
    }


def _ref(result: dict[str, Any]) -> dict[str, Any] | None:
    """The budget β = 1 point of the first rule/merge (the target's reference)."""
    return next((p for p in result["points"] if p["beta"] == 1.0), None)


def curve_table(result: dict[str, Any]) -> str:
    ref = _ref(result)
    lines = [
        "| selection / merge | β | core passages | tokens (in+out) | tokens / passage "
        "| % of β=1 tokens | R@2 | R@5 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in result["points"]:
        share = (
            f"{100 * p['tokens']['total'] / ref['tokens']['total']:.1f}"
            if ref and ref["tokens"]["total"]
            else "-"
        )
        beta = "-" if p["beta"] is None else f"{p['beta']:g}"
        who = "LLM only (no spaCy)" if p["beta"] is None else f"{p['selection']} / {p['merge']}"
        lines.append(
            f"| {who} | {beta} | {p['core_passages']} | {p['tokens']['total']:,} | "
            f"{p['tokens']['per_passage']:.1f} | {share} | {100 * p['recall']['2']:.1f} | "
            f"{100 * p['recall']['5']:.1f} |"
        )
    return "\n".join(lines)


def plot_curve(result: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharex=True)
    groups: dict[str, list[dict[str, Any]]] = {}
    for p in result["points"]:
        key = "LLM only" if p["beta"] is None else f"{p['selection']} / {p['merge']}"
        groups.setdefault(key, []).append(p)
    for ax, k in zip(axes, ("2", "5"), strict=True):
        for name, pts in groups.items():
            pts = sorted(pts, key=lambda p: p["tokens"]["total"])
            xs = [p["tokens"]["total"] / 1000 for p in pts]
            ys = [100 * p["recall"][k] for p in pts]
            style = "*" if name == "LLM only" else "o-"
            ax.plot(xs, ys, style, label=name, markersize=9 if name == "LLM only" else 5)
            for p, x, y in zip(pts, xs, ys, strict=True):
                if p["beta"] is not None:
                    ax.annotate(
                        f"{p['beta']:g}",
                        (x, y),
                        fontsize=7,
                        xytext=(3, 3),
                        textcoords="offset points",
                    )
        ax.set_xlabel("total extraction tokens (thousands, input + output)")
        ax.set_ylabel(f"Recall@{k} (%)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    d = result["dataset"]
    fig.suptitle(
        f"Budget mode on {d['name']} ({d['questions']} questions): recall vs. LLM tokens "
        f"(β annotated; LLM = {result['model']})",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_curve(result: dict[str, Any], out_dir: Path, plots: bool = True) -> list[Path]:
    from terag_bench.outputs import write_json

    d = result["dataset"]
    stem = f"{d['name']}_budget_{result['extractor']}"
    if d["subset"]:
        stem += f"_{d['passages']}p_{d['questions']}q"
    if result["extractor"] == "ollama":
        stem += f"_{result['model'].replace(':', '-')}"
    written = [write_json(result, out_dir / "budget" / f"{stem}.json")]
    md = out_dir / "budget" / f"{stem}.md"
    md.write_text(
        f"# Budget curve: {result['dataset']['name']}\n\n"
        f"{d['passages']} passages{' (cut down, gold passages kept)' if d['subset'] else ''}, "
        f"{d['questions']} questions, "
        f"default retrieval, top {result['top_k']}; core LLM: {result['model']}; tokens: "
        f"{result['tokens_rule']}.\n\n{curve_table(result)}\n",
        encoding="utf-8",
    )
    written.append(md)
    if plots:
        written.append(plot_curve(result, out_dir / "budget" / f"{stem}.png"))
    return written
