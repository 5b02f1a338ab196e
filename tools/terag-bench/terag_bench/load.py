"""`terag bench-load`: throughput and latency with N concurrent clients, and while an ingest
writes the same namespace.

Each client is a process of its own with its own `TeragClient` (its own driver, embedder and
Python interpreter, as separate applications would be), asking the dataset's questions in turn
for a fixed time; the numbers are queries per second over all clients and p50/p95 latency. With
`--ingest`, another process meanwhile indexes a second copy of passages into the same namespace
(new passage ids, so every batch really writes), and the bench counts errors and answers that
name a passage that no longer exists.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing as mp
import os
import time
from pathlib import Path
from typing import Any

from terag_bench.scoring import percentile_ms

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"


def _client_loop(
    namespace: str, questions: list[str], seconds: float, start_at: float, queue: Any
) -> None:
    from terag_neo4j.client import TeragClient

    latencies: list[float] = []
    errors: list[str] = []
    passages: set[str] = set()
    with TeragClient(namespace=namespace, extractor="spacy") as client:
        client.retrieve(questions[0])  # warm-up: models, query plans, the projection
        while time.time() < start_at:
            time.sleep(0.01)
        end = start_at + seconds
        i = os.getpid() % len(questions)
        while time.time() < end:
            t = time.perf_counter()
            try:
                res = client.retrieve(questions[i % len(questions)], top_k=5)
                passages.update(p.id for p in res.passages)
            except Exception as e:  # counted, not raised: the bench reports them
                errors.append(f"{type(e).__name__}: {e}")
            latencies.append(time.perf_counter() - t)
            i += 1
    queue.put({"latencies": latencies, "errors": errors, "passages": sorted(passages)})


def _ingest_loop(namespace: str, docs: list[Any], queue: Any) -> None:
    from terag_neo4j.client import TeragClient

    t = time.perf_counter()
    with TeragClient(namespace=namespace, extractor="spacy") as client:
        report = client.index(docs, progress=False)
    queue.put({"ingest_s": time.perf_counter() - t, "written": report.passages_new})


def run_load(
    namespace: str,
    questions: list[str],
    clients: int,
    seconds: float,
    ingest_docs: list[Any] | None = None,
) -> dict[str, Any]:
    ctx = mp.get_context("spawn")  # a fresh interpreter per client, as separate programs are
    queue = ctx.Queue()
    start_at = time.time() + 20 + 5 * clients  # after every client has warmed up
    procs = [
        ctx.Process(target=_client_loop, args=(namespace, questions, seconds, start_at, queue))
        for _ in range(clients)
    ]
    for p in procs:
        p.start()
    writer = None
    if ingest_docs:
        while time.time() < start_at:
            time.sleep(0.05)
        writer = ctx.Process(target=_ingest_loop, args=(namespace, ingest_docs, queue))
        writer.start()
    results = [queue.get() for _ in range(clients + (1 if writer else 0))]
    for p in [*procs, *([writer] if writer else [])]:
        p.join()
    runs = [r for r in results if "latencies" in r]
    ingest = next((r for r in results if "ingest_s" in r), None)
    lat = [float(x) for r in runs for x in r["latencies"]]
    return {
        "clients": clients,
        "seconds": seconds,
        "queries": len(lat),
        "queries_per_s": round(len(lat) / seconds, 2),
        "p50_ms": percentile_ms(lat, 50),
        "p95_ms": percentile_ms(lat, 95),
        "errors": [e for r in runs for e in r["errors"]][:10],
        "error_count": sum(len(r["errors"]) for r in runs),
        "passages_seen": sorted({p for r in runs for p in r["passages"]}),
        "ingest": ingest,
    }


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-load",
        help="Throughput and latency with concurrent clients, optionally while an ingest writes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("dataset", metavar="DATASET", help="dataset folder, or its name")
    s.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8])
    s.add_argument("--seconds", type=float, default=30.0, help="measured time per client count")
    s.add_argument("--namespace", help="default: the one `terag bench-index` builds")
    s.add_argument(
        "--ingest",
        type=int,
        default=0,
        metavar="N",
        help="also index N passages (copies with new ids) into the namespace while the "
        "clients query it, once per client count",
    )
    s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    s.set_defaults(func=cmd_bench_load)


def cmd_bench_load(args: argparse.Namespace) -> int:
    from terag_bench.datasets import load_dataset
    from terag_bench.ingest import index_namespace
    from terag_bench.runinfo import write_result
    from terag_neo4j.indexing.loading import Document

    dataset = load_dataset(args.dataset)
    ns = args.namespace or index_namespace(dataset.name, "spacy")
    questions = [q.question for q in dataset.questions]
    rows = []
    for n in args.clients:
        docs = None
        if args.ingest:
            tag = f"load{n}_{int(time.time())}"
            docs = [
                Document(f"{tag}:{d.id}", d.text, d.title, is_passage=True)
                for d in dataset.documents[: args.ingest]
            ]
        row = run_load(ns, questions, n, args.seconds, docs)
        row.pop("passages_seen")
        rows.append(row)
        print(
            f"{n} client(s): {row['queries_per_s']} queries/s, p50 {row['p50_ms']} ms, "
            f"p95 {row['p95_ms']} ms, errors {row['error_count']}"
            + (f", ingest {row['ingest']}" if row["ingest"] else "")
        )
    base = rows[0]["queries_per_s"] if rows else 0
    for r in rows:
        r["throughput_vs_first"] = round(r["queries_per_s"] / base, 2) if base else None
    path = write_result(
        args.out,
        f"load_{dataset.name}" + ("_ingest" if args.ingest else ""),
        {"dataset": dataset.name, "namespace": ns, "cpus": os.cpu_count(), "runs": rows},
    )
    print(f"wrote {path}")
    return 0
