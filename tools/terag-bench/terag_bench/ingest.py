"""`terag bench-index`: indexing throughput and cost on a benchmark corpus.

Extraction passages/s, embedding time, Neo4j write throughput (passages/s, relationships/s),
peak RSS, graph counts and tokens per passage; then a re-ingest, which must write nothing. The
namespace is dropped first so the write stage is measured cold. Writes
`<out>/indexing_<dataset>_<extractor>[_n<limit>].json`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"

EPILOG = """\
examples:
  terag bench-index 2wikimultihopqa                                  spaCy graph
  terag bench-index musique_hipporag_train100 -e recorded            recorded GPT-3.5 extractions
  terag bench-index 2wikimultihopqa -e ollama --limit 50 --batches 1 4

DATASET is a folder path or a folder name under $TERAG_DATASETS (default ../shared/datasets).
The graph it builds (namespace benchidx_<dataset>_<extractor>) is what `terag bench-latency`
reads.
"""


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def index_namespace(dataset: str, extractor: str) -> str:
    return f"benchidx_{dataset}_{extractor}".replace("-", "_")[:60]


def run_one(
    settings: Settings,
    namespace: str,
    docs: list[Document],
    batch: int | None = None,
    extractor: Any = None,
    cold: bool = False,
) -> dict[str, Any]:
    from terag_bench.stage_cpu import CpuMeter, cold_caches, stage_table
    from terag_neo4j.client import TeragClient
    from terag_neo4j.store import NamespaceNotFound

    overrides: dict[str, Any] = {"namespace": namespace}
    if extractor is not None and not isinstance(extractor, str):
        overrides["extractor"] = extractor  # the recorded extractions
    if batch is not None:
        overrides["extraction_batch"] = batch
    with TeragClient(settings, **overrides) as client, ExitStack() as stack:
        if cold:
            stack.enter_context(cold_caches(client))
        with contextlib.suppress(NamespaceNotFound):
            client.drop()
        meter = CpuMeter()
        meter.start()
        t = time.perf_counter()
        report = client.index(docs)
        wall = time.perf_counter() - t
        meter.stop()
        stages = stage_table(report, meter, wall)
        fingerprint = client.store.namespaces.fingerprint(namespace)
        info = client.stats()
        rels = info.has_passage + info.co_occurrence
        # Re-ingest to prove idempotency and measure the no-op cost.
        t = time.perf_counter()
        again = client.index(docs, progress=False)
        noop = time.perf_counter() - t
        fp_same = again.passages_new == 0
        # A lazy namespace has no CO_OCCURRENCE yet: build it too, so the full graph's cost shows.
        build_s: float | None = None
        if info.cooccurrence == "lazy":
            t = time.perf_counter()
            client.store.cooccurrence.build(namespace)
            build_s = time.perf_counter() - t
        co_occurrence = client.stats().co_occurrence
    return {
        "namespace": namespace,
        "extractor": report.extractor,
        "model": report.model,
        "extraction_batch": batch,
        "passages": report.passages_total,
        "passages_written": report.passages_new,
        "passages_without_concepts": report.passages_without_concepts,
        "extracted_fresh": report.extracted_fresh,
        "extracted_cached": report.extracted_cached,
        "input_tokens": report.input_tokens,
        "output_tokens": report.output_tokens,
        # None: a count the LLM server did not send (unknown, not 0)
        "input_tokens_per_passage": _rounded(report.input_per_passage),
        "output_tokens_per_passage": _rounded(report.output_per_passage),
        "tokens_unknown": report.tokens_unknown,
        "extraction_s": round(report.extraction_s, 2),
        "extraction_passages_per_s": round(report.passages_total / report.extraction_s, 1)
        if report.extraction_s
        else None,
        "embedding_s": round(report.embedding_s, 2),
        "write_s": round(report.write_s, 2),
        "write_passages_per_s": round(report.passages_new / report.write_s, 1)
        if report.write_s
        else None,
        "write_relationships_per_s": round(rels / report.write_s, 1) if report.write_s else None,
        "cooccurrence_updates": report.cooccurrence_rows,
        "cooccurrence_mode": info.cooccurrence,
        "cooccurrence_build_s": round(build_s, 2) if build_s is not None else None,
        "full_graph_write_s": round(report.write_s + (build_s or 0.0), 2),
        "total_s": round(wall, 2),
        "reingest_noop_s": round(noop, 2),
        "reingest_wrote_nothing": fp_same,
        "nodes": {"passages": info.passages, "concepts": info.concepts, "entities": info.entities},
        "relationships": {"HAS_PASSAGE": info.has_passage, "CO_OCCURRENCE": co_occurrence},
        "concepts_per_passage": round(info.has_passage / max(info.passages, 1), 2),
        "cold": cold,
        "fingerprint": fingerprint,
        "stages": stages,
    }


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-index",
        help="Indexing throughput, tokens and memory on a benchmark corpus",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("dataset", metavar="DATASET", help="dataset folder, or its name")
    s.add_argument("-e", "--extractor", default="spacy", choices=["spacy", "recorded", "ollama"])
    s.add_argument("--limit", type=int, help="first N passages only")
    s.add_argument("--batches", type=int, nargs="*", help="ollama: passages per call to compare")
    s.add_argument(
        "--namespace", help="default benchidx_<dataset>_<extractor> (dropped and rebuilt)"
    )
    s.add_argument(
        "--cold",
        action="store_true",
        help="empty extraction and embedding caches of the run's own (nothing reused)",
    )
    s.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    s.set_defaults(func=cmd_bench_index)


def cmd_bench_index(args: argparse.Namespace) -> int:
    from terag_bench.datasets import load_dataset
    from terag_bench.runinfo import neo4j_server_rss, peak_rss_mib, write_result
    from terag_bench.stage_cpu import format_table

    dataset = load_dataset(args.dataset)
    docs = dataset.documents[: args.limit] if args.limit else dataset.documents
    extractor = dataset.extractor(args.extractor)
    settings = Settings()
    if isinstance(extractor, str):
        settings = settings.model_copy(update={"extractor": extractor})
    if settings.neo4j_uri is None:
        from terag_neo4j.local.neo4j_process import start

        start(settings)  # the managed local server: a no-op when it already runs
    ns = args.namespace or index_namespace(dataset.name, args.extractor)
    runs = []
    for batch in args.batches or [None]:
        suffix = f"_b{batch}" if batch else ""
        runs.append(run_one(settings, ns + suffix, docs, batch, extractor, args.cold))
        log.info("%s", runs[-1])
    result = {
        "dataset": dataset.name,
        "extractor": args.extractor,
        "limit": args.limit,
        "runs": runs,
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "neo4j_rss_mib": neo4j_server_rss(),
    }
    path = write_result(
        args.out,
        f"indexing_{dataset.name}_{args.extractor}{'_n' + str(args.limit) if args.limit else ''}",
        result,
    )
    for r in runs:
        print(format_table(r["stages"]))
        print(f"fingerprint {r['fingerprint']}")
        print(
            f"{dataset.name} [{r['extractor']} batch={r['extraction_batch']}] {r['passages']} "
            f"passages: extract {r['extraction_s']}s ({r['extraction_passages_per_s']} p/s), "
            f"embed {r['embedding_s']}s, write {r['write_s']}s ({r['write_passages_per_s']} p/s, "
            f"{r['write_relationships_per_s']} rel/s; CO_OCCURRENCE {r['cooccurrence_mode']}, "
            f"built after in {r['cooccurrence_build_s']}s; full graph {r['full_graph_write_s']}s), "
            f"total {r['total_s']}s; nodes {r['nodes']}, "
            f"rels {r['relationships']}; tokens/passage {r['input_tokens_per_passage']} in / "
            f"{r['output_tokens_per_passage']} out; re-ingest {r['reingest_noop_s']}s "
            f"(wrote nothing: {r['reingest_wrote_nothing']})"
        )
    print(f"peak RSS {result['peak_rss_mib']} MiB; neo4j {result['neo4j_rss_mib']}; wrote {path}")
    return 0
