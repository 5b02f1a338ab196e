"""`terag bench-latency`: retrieval latency on the graph `terag bench-index` built.

Runs every question with the chosen preset (`default`: name linking and passage seeding;
`paper`: spaCy query NER; no LLM calls either way) and reports p50/p95 of the whole retrieval
and of its stages, GDS's own compute time for the same personalised PageRank
(`gds.pageRank.stats`, same restart vector), and the same PageRank computed in-process (scipy
sparse power iteration on the graph exported from Neo4j, passage seeds recomputed from the
exported embeddings) as the reference: both latencies, their ratio, and whether both give the
same top-5 passages. Writes `<out>/retrieval_<dataset>_<preset>.json`.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from pathlib import Path
from typing import Any

from terag_bench.scoring import percentile, percentile_ms
from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.recipes import RECIPES

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"

EPILOG = """\
examples:
  terag bench-index 2wikimultihopqa && terag bench-latency 2wikimultihopqa
  terag bench-latency 2wikimultihopqa --preset paper --limit 150

DATASET is a folder path or a folder name under $TERAG_DATASETS (default ../shared/datasets).
"""


# The in-process PageRank iterated until no score moves by more than this: the exact ranking
# that the walk's tolerance and iteration cap approximate.
EXACT_TOLERANCE = 1e-12


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-latency",
        help="Retrieval latency per stage, GDS compute time and the in-process PageRank reference",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("dataset", metavar="DATASET", help="dataset folder, or its name")
    s.add_argument(
        "-e",
        "--extractor",
        default="spacy",
        help="the backend the graph was indexed with (names its namespace; default spacy)",
    )
    s.add_argument("--limit", type=int, help="only the first N questions")
    s.add_argument("--namespace", help="default: the one `terag bench-index` builds")
    s.add_argument("--preset", default="default", choices=list(RECIPES))
    s.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a retrieval setting on top of the preset, e.g. --set tolerance=1e-6 "
        "--set gds_concurrency=4 (the result file's name then says so)",
    )
    s.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    s.add_argument(
        "--baseline-rev",
        metavar="REV",
        help="compare with this commit instead, interleaved in one run: single-client latency, "
        "stages, throughput per core and top-10 identity (eval/interleave.py)",
    )
    s.add_argument(
        "--rev", metavar="REV", help="with --baseline-rev: this commit in place of the checkout"
    )
    s.add_argument("--clients", type=int, default=4, help="with --baseline-rev: threads (4)")
    s.add_argument(
        "--seconds", type=float, default=15.0, help="with --baseline-rev: per load round (15)"
    )
    s.set_defaults(func=cmd_bench_latency)


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"--set takes FIELD=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def cmd_bench_latency(args: argparse.Namespace) -> int:
    from terag_bench.datasets import load_dataset
    from terag_bench.ingest import index_namespace
    from terag_bench.reference import export_graph, personalized_pagerank, top_passages
    from terag_bench.runinfo import write_result
    from terag_bench.scoring import recall_at_k
    from terag_neo4j.client import TeragClient
    from terag_neo4j.retrieval import pagerank
    from terag_neo4j.store import passage_uid

    dataset = load_dataset(args.dataset, limit=args.limit)
    questions = dataset.questions
    ns = args.namespace or index_namespace(dataset.name, args.extractor)
    overrides = parse_overrides(args.set)
    if args.baseline_rev:
        from terag_bench import interleave
        from terag_bench.runinfo import write_result

        texts = [q.question for q in questions]
        out = interleave.compare(
            ns,
            args.preset,
            overrides,
            texts,
            args.baseline_rev,
            args.clients,
            args.seconds,
            current_rev=args.rev,
        )
        name = f"interleaved_{dataset.name}_{args.preset}_vs_{out['baseline_rev']}"
        path = write_result(args.out, name, out)
        print(interleave.report(out) + f"\nwrote {path}")
        return 0
    settings = Settings().with_overrides(
        namespace=ns, extractor="spacy", preset=args.preset, retrieval=overrides
    )
    rc = settings.retrieval
    if settings.neo4j_uri is None:
        from terag_neo4j.local.neo4j_process import start

        start(settings)  # the managed local server: a no-op when it already runs
    with TeragClient(settings) as client:
        info = client.stats()
        r = client.retriever
        scope = r.scope(info.passages)
        t = time.perf_counter()
        graph_name = r.ensure_projection(ns) if scope == "global" else ""
        projection_s = time.perf_counter() - t
        client.retrieve(questions[0].question)  # warm-up: model loads, query plans
        t = time.perf_counter()
        # The reference walks the namespace's graph: it is comparable to the global walk only.
        graph = (
            export_graph(client.store, ns, r.projection_spec(), rc.orientation)
            if graph_name
            else None
        )
        export_s = time.perf_counter() - t

        totals: list[float] = []
        stages: dict[str, list[float]] = {
            k: []
            for k in (
                "projection",
                "linking",
                "ner",
                "matching",
                "embedding",
                "flat",
                "restart",
                "local_projection",
                "pagerank",
                "dense",
            )
        }
        local_sizes: list[tuple[int, int]] = []
        gds_compute: list[float] = []
        gds_stats_call: list[float] = []
        ref_times: list[float] = []
        same_top5 = same_top5_exact = 0
        compared = 0
        fallbacks = 0
        recall: dict[int, list[float]] = {2: [], 5: []}
        for q in questions:
            t = time.perf_counter()
            res = client.retrieve(q.question, top_k=5)
            totals.append(time.perf_counter() - t)
            got = [p.id for p in res.passages]
            for cut in recall:
                recall[cut].append(recall_at_k(got, q.gold_ids, cut))
            for k in stages:
                if k in res.timings:
                    stages[k].append(res.timings[k])
            if res.mode != "pagerank":
                fallbacks += 1
                continue
            if res.walk == "local":
                local_sizes.append((res.graph_nodes, res.graph_relationships))
            if graph is None:
                continue
            t = time.perf_counter()
            rec = pagerank.pagerank_stats(
                client.store, rc, ns, graph_name, res.restart, pagerank.leaf_concepts(res.matches)
            )
            gds_stats_call.append(time.perf_counter() - t)
            if rec:
                gds_compute.append(rec["computeMillis"] / 1000)
            t = time.perf_counter()
            scores = personalized_pagerank(
                graph, res.restart, rc.damping, rc.max_iterations, rc.tolerance
            )
            ref = top_passages(graph, scores, 5)
            ref_times.append(time.perf_counter() - t)
            compared += 1
            mine = [passage_uid(ns, p.id) for p in res.passages]
            same_top5 += [u for u, _ in ref] == mine
            # The walk converged: what the ranking would be with no convergence noise at all.
            exact = personalized_pagerank(graph, res.restart, rc.damping, 100_000, EXACT_TOLERANCE)
            same_top5_exact += [u for u, _ in top_passages(graph, exact, 5)] == mine

    result: dict[str, Any] = {
        "dataset": dataset.name,
        "namespace": ns,
        "preset": args.preset,
        "overrides": overrides,
        "knobs": rc.model_dump(),
        "walk": r.projection_spec().code,
        "scope": scope,
        "local_graph": {
            "nodes_p50": percentile([a for a, _ in local_sizes], 50),
            "relationships_p50": percentile([b for _, b in local_sizes], 50),
            "relationships_max": max(b for _, b in local_sizes),
        }
        if local_sizes
        else None,
        "questions": len(questions),
        "graph": {
            "passages": info.passages,
            "concepts": info.concepts,
            "has_passage": info.has_passage,
            "co_occurrence": info.co_occurrence,
            "projected_nodes": len(graph.nodes) if graph else None,
            "projected_relationships": int(graph.transition.nnz) if graph else None,
        },
        "projection_s": round(projection_s, 3),
        "export_s": round(export_s, 3),
        "dense_fallbacks": fallbacks,
        "retrieval_ms": {
            "p50": percentile_ms(totals, 50),
            "p95": percentile_ms(totals, 95),
            "mean": statistics.mean(totals) * 1000,
        },
        "stages_ms": {
            k: {"p50": percentile_ms(v, 50), "p95": percentile_ms(v, 95)}
            for k, v in stages.items()
            if v
        },
        "gds_compute_ms": {
            "p50": percentile_ms(gds_compute, 50),
            "p95": percentile_ms(gds_compute, 95),
        },
        "gds_stats_call_ms": {
            "p50": percentile_ms(gds_stats_call, 50),
            "p95": percentile_ms(gds_stats_call, 95),
        },
        "in_process_reference_ms": {
            "p50": percentile_ms(ref_times, 50),
            "p95": percentile_ms(ref_times, 95),
        },
        "ratio_gds_pagerank_stage_to_reference_p50": (
            percentile(stages["pagerank"], 50) / percentile(ref_times, 50) if ref_times else None
        ),
        "ratio_gds_compute_to_reference_p50": (
            percentile(gds_compute, 50) / percentile(ref_times, 50)
            if ref_times and gds_compute
            else None
        ),
        "same_top5": same_top5,
        "same_top5_as_exact": same_top5_exact,
        "compared": compared,
        "recall": {f"R@{k}": round(100 * statistics.mean(v), 1) for k, v in recall.items() if v},
    }
    tag = "".join(f"_{k}-{v}" for k, v in sorted(overrides.items()))
    path = write_result(args.out, f"retrieval_{dataset.name}_{args.preset}{tag}", result)
    rm, st = result["retrieval_ms"], result["stages_ms"]
    print(f"{dataset.name}: {len(questions)} questions, graph {result['graph']}")
    print(
        f"retrieval p50 {rm['p50']:.1f} ms, p95 {rm['p95']:.1f} ms (dense fallbacks: {fallbacks})"
    )
    for k, v in st.items():
        print(f"  {k:9} p50 {v['p50']:.1f} ms  p95 {v['p95']:.1f} ms")
    if result["gds_compute_ms"]["p50"] is not None:  # a local walk has no projection to time
        print(
            f"  GDS compute (pageRank.stats computeMillis) p50 "
            f"{result['gds_compute_ms']['p50']:.1f} ms; whole stats call p50 "
            f"{result['gds_stats_call_ms']['p50']:.1f} ms"
        )
    if result["in_process_reference_ms"]["p50"] is not None:
        print(
            f"  in-process scipy reference p50 {result['in_process_reference_ms']['p50']:.1f} ms; "
            f"GDS PageRank stage / reference = "
            f"{result['ratio_gds_pagerank_stage_to_reference_p50']}; "
            f"GDS compute / reference = {result['ratio_gds_compute_to_reference_p50']}"
        )
    print(
        f"same top-5 as the reference at the same tolerance: {same_top5}/{compared}, as the "
        f"exact PageRank: {same_top5_exact}/{compared}; recall {result['recall']}; "
        f"projection {projection_s:.2f}s; wrote {path}"
    )
    return 0
