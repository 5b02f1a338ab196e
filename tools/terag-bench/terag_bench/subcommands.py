"""The bench's commands: `terag-bench COMMAND`, and `terag bench-COMMAND` through the product's
entry-point group `terag_neo4j.commands` (this module: `COMMANDS` and `register_cli`). Only the
standard library is imported at the top: `terag --help` imports this module."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# Each command under its `terag` name, with its help line (tests/unit/test_bench_commands.py
# checks these against what the modules register). `terag-bench` names them without `bench-`,
# and `bench` itself `run`.
COMMANDS: dict[str, str] = {
    "bench": "Recall@k, EM/F1, tokens and latency on multi-hop QA data, with baselines",
    "bench-extraction": "Entity recall/precision, grounding and tokens per passage of extractors",
    "bench-index": "Indexing throughput, tokens and memory on a benchmark corpus",
    "bench-latency": (
        "Retrieval latency per stage, GDS compute time and the in-process PageRank reference"
    ),
    "bench-load": (
        "Throughput and latency with concurrent clients, optionally while an ingest writes"
    ),
    "bench-scale": (
        "ingest, store, memory, projection and latency at 10k, 100k, 1M synthetic passages"
    ),
    "bench-isolation": (
        "whether namespace A's top-10 moves when namespace B is indexed, deleted, dropped"
    ),
    "bench-serve": "HTTP service throughput, latency, errors and memory under concurrent clients",
    "bench-documents": (
        "Reading a generated long PDF: seconds and peak memory (tracemalloc and RSS)"
    ),
    "bench-chunking": "Splitting exports of 10k to 1M one-line paragraphs into passages: seconds",
    "bench-soak": (
        "Mixed traffic on two services for minutes while Neo4j restarts and one is killed twice"
    ),
    "bench-final-rank-features": (
        "the learned final ranking's training data: features and labels per question"
    ),
    "bench-final-rank-train": (
        "rebuild the learned final ranking and print its leave-one-corpus-out table"
    ),
    "bench-llm-parity": (
        "The same Ollama model through ollama: and openai: (/v1): identical concepts, tokens"
    ),
    "bench-archive": "Export and import of a namespace against its cold index time",
    "bench-job-progress": (
        "A 150,000-paragraph document through terag serve: first progress and its gaps"
    ),
    "bench-embed-int8": (
        "bge-small-en-v1.5 in f32 against int8: CPU s per 1,000 passages, vector cosines"
    ),
    "bench-upgrade": "A database an older release built, served and written by today's code",
}


def short_name(name: str) -> str:
    """A command's `terag-bench` name: `bench-latency` -> `latency`, `bench` -> `run`."""
    return "run" if name == "bench" else name.removeprefix("bench-")


class _Renamed:
    """Subparsers that add each command under its `terag-bench` name."""

    def __init__(self, subparsers: Any) -> None:
        self._subparsers = subparsers

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = self._subparsers.add_parser(short_name(name), **kwargs)
        return parser


def main(argv: Sequence[str] | None = None) -> int:
    """`terag-bench`: the benchmarks, with terag's logging, errors and exit codes."""
    from terag_neo4j.cli.main import run

    parser = argparse.ArgumentParser(
        prog="terag-bench",
        description="Benchmarks of terag-neo4j (docs/benchmarks.md); results go to bench/results/.",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="debug logging and full tracebacks"
    )
    register_cli(_Renamed(parser.add_subparsers(dest="command", metavar="COMMAND")))
    return run(parser, sys.argv[1:] if argv is None else list(argv))


DEFAULT_OUT = Path("bench") / "results"

EPILOG = """\
examples:
  terag bench 2wikimultihopqa                      spaCy graph + BM25 + dense, all 300 questions
  terag bench musique_hipporag_train100            also the recorded GPT-3.5 extractions
  terag bench hotpotqa --limit 20 --answers        EM/F1 with the Ollama reader on 20 questions
  terag bench all                                  every folder under the dataset root

DATASET is a folder path or a folder name under $TERAG_DATASETS (default ../shared/datasets).
"""


def register_cli(subparsers: Any) -> None:
    from terag_bench.bench import DEFAULT_METHODS, METHOD_CHOICES

    s = subparsers.add_parser(
        "bench",
        help=COMMANDS["bench"],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("datasets", nargs="+", metavar="DATASET", help="dataset folder(s), or 'all'")
    s.add_argument(
        "-e",
        "--extractor",
        action="append",
        choices=["spacy", "ollama", "recorded"],
        help="graph backend(s), repeatable (default: spacy, plus recorded where the folder has "
        "recorded_extractions.jsonl; ollama only when asked: slow)",
    )
    s.add_argument("--limit", type=int, help="only the first N questions")
    s.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    s.add_argument("--answers", action="store_true", help="also EM/F1 with the Ollama reader")
    s.add_argument(
        "--answer-methods",
        nargs="+",
        metavar="METHOD",
        help="methods whose passages the reader answers from (default: the first TERAG method)",
    )
    s.add_argument(
        "--answer-budget-s",
        type=float,
        metavar="SECONDS",
        help="make no new reader call after SECONDS; answers are cached, so a rerun goes on "
        "where this one stopped, and 0 reports what the cache holds",
    )
    s.add_argument(
        "--methods",
        nargs="+",
        choices=METHOD_CHOICES,
        default=list(DEFAULT_METHODS),
        help="baselines and TERAG variants to run (default: all)",
    )
    s.add_argument("--fresh", action="store_true", help="drop the bench namespaces and index anew")
    s.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    s.add_argument(
        "--max-passages",
        type=int,
        help="for tests: cut the corpus to N passages (gold passages always kept); "
        "uses its own namespace",
    )
    s.add_argument(
        "--namespace-prefix",
        default="bench",
        help="namespaces are PREFIX_<dataset>_<extractor> (default bench)",
    )
    s.add_argument(
        "--budgets",
        nargs="+",
        type=float,
        metavar="BETA",
        help="instead of the methods: the budget-mode curve, R@2/R@5 against extraction tokens "
        "for these budgets (e.g. 0 0.05 0.1 0.2 0.5 1); writes OUT/budget/",
    )
    s.add_argument(
        "--budget-selection",
        nargs="+",
        choices=["pagerank", "degree", "knn_pagerank"],
        default=["pagerank"],
        help="selection rules of the curve (default pagerank)",
    )
    s.add_argument(
        "--budget-merge",
        nargs="+",
        choices=["add", "replace"],
        default=["add"],
        help="merges of the curve (default add)",
    )
    s.add_argument(
        "--budget-extractor",
        choices=["recorded", "ollama"],
        default="recorded",
        help="the core passages' LLM: the recorded extractions (default) or Ollama's "
        "TERAG_LLM_MODEL",
    )
    s.add_argument(
        "--no-reference",
        action="store_true",
        help="curve without the plain LLM graph (the extractor on every passage)",
    )
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    s.set_defaults(func=cmd_bench)
    from terag_bench.archive_bench import register_cli as register_archive
    from terag_bench.chunking_bench import register_cli as register_chunking
    from terag_bench.documents_bench import register_cli as register_documents
    from terag_bench.embed_int8 import register_cli as register_embed_int8
    from terag_bench.extraction_bench import register_cli as register_extraction
    from terag_bench.final_rank_data import register_cli as register_final_rank_features
    from terag_bench.final_rank_train import register_cli as register_final_rank_train
    from terag_bench.ingest import register_cli as register_ingest
    from terag_bench.isolation import register_cli as register_isolation
    from terag_bench.job_progress import register_cli as register_job_progress
    from terag_bench.latency import register_cli as register_latency
    from terag_bench.llm_parity import register_cli as register_llm_parity
    from terag_bench.load import register_cli as register_load
    from terag_bench.scale import register_cli as register_scale
    from terag_bench.serve_load import register_cli as register_serve_load
    from terag_bench.soak import register_cli as register_soak
    from terag_bench.upgrade_bench import register_cli as register_upgrade

    register_extraction(subparsers)
    register_ingest(subparsers)
    register_latency(subparsers)
    register_load(subparsers)
    register_scale(subparsers)
    register_serve_load(subparsers)
    register_isolation(subparsers)
    register_documents(subparsers)
    register_chunking(subparsers)
    register_soak(subparsers)
    register_final_rank_features(subparsers)
    register_final_rank_train(subparsers)
    register_llm_parity(subparsers)
    register_archive(subparsers)
    register_job_progress(subparsers)
    register_embed_int8(subparsers)
    register_upgrade(subparsers)


def cmd_bench(args: argparse.Namespace) -> int:
    from terag_bench.bench import BenchConfig, run_bench
    from terag_bench.datasets import list_datasets, load_dataset, resolve_dataset
    from terag_bench.outputs import answers_table, detail_table, write_json, write_summary
    from terag_bench.versus import versus, versus_table
    from terag_neo4j.config import Settings
    from terag_neo4j.indexing.loading import InputNotFound

    settings = Settings()
    if settings.neo4j_uri is None and _needs_graph(args):
        from terag_neo4j.local.neo4j_process import start

        start(settings)  # the managed local server: a no-op when it already runs
    folders = (
        list_datasets() if args.datasets == ["all"] else [resolve_dataset(d) for d in args.datasets]
    )
    if not folders:
        raise InputNotFound("no dataset folders found (set TERAG_DATASETS)")
    for folder in folders:
        dataset = load_dataset(folder, limit=args.limit, max_passages=args.max_passages)
        if args.budgets:
            _budget_curve(args, settings, dataset)
            continue
        extractors = args.extractor or (
            ["spacy", "recorded"] if dataset.recorded_extractions else ["spacy"]
        )
        if "recorded" in extractors and dataset.recorded_extractions is None:
            log.warning(
                "%s has no recorded extractions; skipping the recorded backend", dataset.name
            )
            extractors = [e for e in extractors if e != "recorded"]
        if not _needs_graph(args):
            extractors = []
        config = BenchConfig(
            extractors=extractors,
            methods=list(args.methods),
            answers=args.answers,
            answer_methods=args.answer_methods,
            answer_budget_s=args.answer_budget_s,
            fresh=args.fresh,
            namespace_prefix=args.namespace_prefix,
            progress=not args.quiet,
        )
        print(
            f"bench {dataset.name}: {len(dataset.documents)} passages, "
            f"{len(dataset.questions)} questions, extractors {extractors or 'none'}"
        )
        result = run_bench(settings, dataset, config)
        result["versus"] = versus(result)
        stem = dataset.name + (f"_subset_{dataset.fingerprint()}" if dataset.subset else "")
        path = write_json(result, args.out / f"{stem}.json")
        print(detail_table(result))
        print(versus_table(result) or "")
        answers = answers_table(result)
        if answers:
            print(answers)
        print(f"{dataset.name}: {result['timings_s']['total_s']:.1f}s; wrote {path}")
    for p in write_summary(args.out, plots=not args.no_plots):
        print(f"wrote {p}")
    return 0


def _budget_curve(args: argparse.Namespace, settings: Any, dataset: Any) -> None:
    from terag_bench.budget_curve import (
        CurveConfig,
        curve_table,
        run_budget_curve,
        write_curve,
    )
    from terag_bench.datasets import DatasetError

    if args.budget_extractor == "recorded" and dataset.recorded_extractions is None:
        raise DatasetError(
            f"{dataset.name} has no recorded_extractions.jsonl: use --budget-extractor ollama"
        )
    cfg = CurveConfig(
        betas=args.budgets,
        selections=args.budget_selection,
        merges=args.budget_merge,
        extractor=args.budget_extractor,
        reference=not args.no_reference,
        fresh=args.fresh,
        namespace_prefix=args.namespace_prefix,
        progress=not args.quiet,
    )
    print(
        f"budget curve {dataset.name}: {len(dataset.documents)} passages, "
        f"{len(dataset.questions)} questions, β {list(cfg.betas)}, core LLM {cfg.extractor}"
    )
    result = run_budget_curve(settings, dataset, cfg)
    print(curve_table(result))
    for p in write_curve(result, args.out, plots=not args.no_plots):
        print(f"wrote {p}")


def _needs_graph(args: argparse.Namespace) -> bool:
    return any(m not in ("bm25", "dense") for m in args.methods)
