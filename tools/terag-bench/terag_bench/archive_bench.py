"""`terag bench-archive`: a namespace's export and import against its cold index time.

Indexes the dataset cold (as `terag bench-index`: the namespace dropped first), exports it to
an archive, imports that into a fresh namespace, and reports each stage's seconds, their ratio
to the cold index time measured in the same run, the archive's size, this process's peak RSS
and Neo4j's, whether the fingerprints are equal, and how many of the dataset's questions have
the same top-10 in both namespaces. Writes `<out>/archive_<dataset>_<extractor>.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-archive",
        help="Export and import of a namespace against its cold index time",
        description=__doc__,
    )
    s.add_argument("dataset", metavar="DATASET", help="dataset folder, or its name")
    s.add_argument("-e", "--extractor", default="spacy", choices=["spacy", "recorded"])
    s.add_argument("--limit", type=int, help="first N passages only")
    s.add_argument("--questions", type=int, default=100, help="questions whose top-10 compare")
    s.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    s.add_argument(
        "--url",
        help="also export and import through this running terag serve on the same Neo4j "
        "(TERAG_API_KEY from the environment)",
    )
    s.add_argument("--service-pid", type=int, help="that service's pid, for its RSS")
    s.set_defaults(func=cmd_bench_archive)


def cmd_bench_archive(args: argparse.Namespace) -> int:
    from terag_bench.datasets import load_dataset
    from terag_bench.ingest import index_namespace, run_one
    from terag_bench.runinfo import neo4j_server_rss, peak_rss_mib, write_result
    from terag_neo4j.client import TeragClient
    from terag_neo4j.config import Settings
    from terag_neo4j.store import NamespaceNotFound

    dataset = load_dataset(args.dataset)
    docs = dataset.documents[: args.limit] if args.limit else dataset.documents
    extractor = dataset.extractor(args.extractor)
    settings = Settings()
    if isinstance(extractor, str):
        settings = settings.model_copy(update={"extractor": extractor})
    if settings.neo4j_uri is None:
        from terag_neo4j.local.neo4j_process import start

        start(settings)
    ns = index_namespace(dataset.name, args.extractor) + "_arc"
    target = ns[:56] + "_imp"
    t = time.perf_counter()
    indexed = run_one(settings, ns, docs, None, extractor)
    index_s = time.perf_counter() - t
    load = os.getloadavg()
    with TeragClient(settings, namespace=ns) as client, tempfile.TemporaryDirectory() as tmp:
        with contextlib.suppress(NamespaceNotFound):
            client.drop(target)
        path = Path(tmp) / "archive.zip"
        t = time.perf_counter()
        client.export_namespace(path, ns)
        export_s = time.perf_counter() - t
        size = path.stat().st_size
        t = time.perf_counter()
        report = client.import_namespace(path, target)
        import_s = time.perf_counter() - t
        same_fp = client.store.namespaces.fingerprint(ns) == client.store.namespaces.fingerprint(
            target
        )
        questions = dataset.questions[: args.questions]
        same = 0
        for q in questions:
            a = [p.id for p in client.retrieve(q.question, top_k=10, namespace=ns).passages]
            b = [p.id for p in client.retrieve(q.question, top_k=10, namespace=target).passages]
            same += a == b
        client.drop(target)
        http: dict[str, Any] = {}
        if args.url:
            from terag_bench.archive_http import http_round_trip

            http = http_round_trip(
                args.url,
                args.service_pid,
                ns,
                target,
                Path(tmp),
                client.store.namespaces.fingerprint,
            )
            client.drop(target)
    result = {
        "dataset": dataset.name,
        "extractor": args.extractor,
        "passages": report.passages,
        "concepts": report.concepts,
        "cold_index_s": indexed["total_s"],
        "index_and_reingest_s": round(index_s, 2),
        "index_report": indexed,
        "export_s": round(export_s, 2),
        "import_s": round(import_s, 2),
        "archive_mib": round(size / 2**20, 2),
        # the cold index's own wall time (run_one's `total_s`: without its re-ingest check)
        "ratio": round((export_s + import_s) / float(indexed["total_s"]), 3),
        "same_fingerprint": same_fp,
        "same_top10": same,
        "questions": len(questions),
        "load_avg": [round(x, 2) for x in load],
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "neo4j_rss_mib": neo4j_server_rss(),
        **http,
    }
    out = write_result(args.out, f"archive_{dataset.name}_{args.extractor}", result)
    print(
        f"{dataset.name} [{args.extractor}] {report.passages} passages, {report.concepts} "
        f"concepts: cold index {result['cold_index_s']}s; export {result['export_s']}s "
        f"({result['archive_mib']} MiB), import {result['import_s']}s: "
        f"{100 * result['ratio']:.1f}% of the cold index; same fingerprint: {same_fp}; same "
        f"top-10: {same}/{len(questions)}; load {result['load_avg']}; peak RSS "
        f"{result['peak_rss_mib']} MiB; neo4j {result['neo4j_rss_mib']}; wrote {out}"
    )
    if http:
        print(
            f"through {args.url}: export {http['http_export_s']}s, import (a job) "
            f"{http['http_import_s']}s, state {http['http_job_state']}, same fingerprint: "
            f"{http['http_same_fingerprint']}; service RSS {http['service_rss_before_mib']} -> "
            f"{http['service_rss_after_export_mib']} -> {http['service_rss_after_import_mib']} MiB"
        )
    ok_http = not http or (http["http_same_fingerprint"] and http["http_job_state"] == "succeeded")
    return 0 if same_fp and same == len(questions) and ok_http else 1
