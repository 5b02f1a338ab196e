"""Indexing benchmark (issue: TERAG indexing).

    python -m bench.indexing --dataset 2wikimultihopqa --extractor spacy
    python -m bench.indexing --dataset musique_hipporag_train100 --extractor recorded
    python -m bench.indexing --dataset 2wikimultihopqa --extractor ollama --limit 50 --batches 1 4

Prints and writes bench/results/indexing_<dataset>_<extractor>.json: extraction passages/s,
embedding time, Neo4j write throughput (passages/s, relationships/s), peak RSS, graph counts,
tokens per passage. The namespace is dropped first so the write stage is measured cold.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import time
from typing import Any

from bench.common import (
    datasets_root,
    load_corpus,
    neo4j_server_rss,
    peak_rss_mib,
    setup_logging,
    write_result,
)
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.graph_store import NamespaceNotFound

log = logging.getLogger("bench.indexing")


def run_one(
    settings: Settings, namespace: str, docs: list[Any], batch: int | None = None
) -> dict[str, Any]:
    overrides: dict[str, Any] = {"namespace": namespace}
    if batch is not None:
        overrides["extraction_batch"] = batch
    with TeragClient(settings, **overrides) as client:
        with contextlib.suppress(NamespaceNotFound):
            client.drop()
        t = time.perf_counter()
        report = client.index(docs)
        wall = time.perf_counter() - t
        info = client.stats()
        rels = info.has_passage + info.co_occurrence
        # Re-ingest to prove idempotency and measure the no-op cost.
        t = time.perf_counter()
        again = client.index(docs, progress=False)
        noop = time.perf_counter() - t
        fp_same = again.passages_new == 0
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
        "input_tokens_per_passage": round(report.input_per_passage, 1),
        "output_tokens_per_passage": round(report.output_per_passage, 1),
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
        "total_s": round(wall, 2),
        "reingest_noop_s": round(noop, 2),
        "reingest_wrote_nothing": fp_same,
        "nodes": {"passages": info.passages, "concepts": info.concepts, "entities": info.entities},
        "relationships": {"HAS_PASSAGE": info.has_passage, "CO_OCCURRENCE": info.co_occurrence},
        "concepts_per_passage": round(info.has_passage / max(info.passages, 1), 2),
    }


def main() -> None:
    setup_logging()
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dataset", default="2wikimultihopqa")
    ap.add_argument("--extractor", default="spacy", choices=["spacy", "recorded", "ollama"])
    ap.add_argument("--limit", type=int, help="first N passages only")
    ap.add_argument("--batches", type=int, nargs="*", help="ollama: passages per call to compare")
    args = ap.parse_args()
    folder = datasets_root() / args.dataset
    docs = load_corpus(folder, args.limit)
    overrides: dict[str, Any] = {"extractor": args.extractor}
    if args.extractor == "recorded":
        overrides["recorded_extractions"] = folder / "recorded_extractions.jsonl"
    settings = Settings().model_copy(update=overrides)
    ns = f"benchidx_{args.dataset}_{args.extractor}".replace("-", "_")[:60]
    runs = []
    for batch in args.batches or [None]:
        suffix = f"_b{batch}" if batch else ""
        runs.append(run_one(settings, ns + suffix, docs, batch))
        log.info("%s", runs[-1])
    result = {
        "dataset": args.dataset,
        "extractor": args.extractor,
        "limit": args.limit,
        "runs": runs,
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "neo4j_rss_mib": neo4j_server_rss(),
    }
    path = write_result(
        f"indexing_{args.dataset}_{args.extractor}{'_n' + str(args.limit) if args.limit else ''}",
        result,
    )
    for r in runs:
        print(
            f"{args.dataset} [{r['extractor']} batch={r['extraction_batch']}] {r['passages']} passages: "
            f"extract {r['extraction_s']}s ({r['extraction_passages_per_s']} p/s), embed {r['embedding_s']}s, "
            f"write {r['write_s']}s ({r['write_passages_per_s']} p/s, {r['write_relationships_per_s']} rel/s), "
            f"total {r['total_s']}s; nodes {r['nodes']}, rels {r['relationships']}; "
            f"tokens/passage {r['input_tokens_per_passage']} in / {r['output_tokens_per_passage']} out; "
            f"re-ingest {r['reingest_noop_s']}s (wrote nothing: {r['reingest_wrote_nothing']})"
        )
    print(f"peak RSS {result['peak_rss_mib']} MiB; neo4j {result['neo4j_rss_mib']}; wrote {path}")


if __name__ == "__main__":
    main()
