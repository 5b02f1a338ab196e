"""`terag bench-scale`: how ingest, store, memory, projection and retrieval grow with the corpus.

One namespace per profile grows through the sizes (10k, then 90k more for 100k, ...) from the
synthetic corpus of `terag_bench.synthetic`, indexed with the `recorded` backend (replayed
extractions: no model in the loop) and hash vectors instead of MiniLM (the model's cost is
measured on a real corpus, see docs/benchmarks.md). After each size it measures the store and the
queries, writes the state file, and plots. Rerunning the same command resumes: finished sizes
are kept, and a size cut short continues from the last chunk written (ingest is idempotent).
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from terag_bench.runinfo import peak_rss_mib, process_rss_mib
from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.indexing.loading import InputNotFound

log = logging.getLogger(__name__)

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
CHUNK = 10_000  # passages per index call: the unit a killed run loses at most


def _dir_mib(path: Path) -> float | None:
    if not path.exists():
        return None
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=False)
    return round(int(out.stdout.split()[0]) / 1024, 1) if out.returncode == 0 else None


def _local_server(settings: Settings) -> tuple[int | None, Path | None]:
    """Pid and database folder of the managed local Neo4j; (None, None) for a remote one."""
    if settings.neo4j_uri is not None:
        return None, None
    from terag_neo4j.local import neo4j as local

    st = local.status(settings)
    return st.pid, local.layout(settings).data / "databases" / settings.neo4j_database


def measure_size(
    settings: Settings, profile: str, size: int, folder: Path, questions: int, prefix: str = "scale"
) -> dict[str, Any]:
    """Grow the profile's namespace to `size` passages, then measure it."""
    from terag_bench.recorded import RecordedExtractor
    from terag_bench.synthetic import read_corpus
    from terag_neo4j.client import TeragClient

    ns = f"{prefix}_{profile}"
    client = TeragClient(
        settings,
        namespace=ns,
        extractor=RecordedExtractor(folder / "recorded_extractions.jsonl"),
    )
    use_synthetic_embedder(client)
    with client:
        try:
            before = client.stats().passages
        except Exception:  # a new namespace
            before = 0
        ingest_s = write_s = grounding_s = extraction_s = 0.0
        added = 0
        for start in range(before - before % CHUNK, size, CHUNK):
            docs = list(read_corpus(folder, start, min(start + CHUNK, size)))
            t = time.perf_counter()
            report = client.index(docs, progress=False)
            ingest_s += time.perf_counter() - t
            write_s += report.write_s
            grounding_s += report.grounding_s
            extraction_s += report.extraction_s
            added += report.passages_new
            log.info(
                "%s: %d/%d passages (%.0f/s)",
                ns,
                start + len(docs),
                size,
                report.passages_new / max(report.total_s, 1e-9),
            )
        # The queries run in a process of their own, as a service's would: its peak memory is
        # the query path's, without the ingest's or the replay file's.
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
            queries = pool.submit(time_queries, settings, ns, folder, size, questions).result()
        info = client.stats()
        pid, db = _local_server(settings)
        return {
            "profile": profile,
            "passages": info.passages,
            "concepts": info.concepts,
            "has_passage": info.has_passage,
            "co_occurrence": info.co_occurrence,
            "added": added,
            "ingest_s": round(ingest_s, 1),
            "write_s": round(write_s, 1),
            "grounding_s": round(grounding_s, 1),
            "extraction_s": round(extraction_s, 1),  # replayed, beside the writes
            "ingest_passages_per_s": round(added / ingest_s, 1) if ingest_s else None,
            "store_mib": _dir_mib(db) if db else None,
            "neo4j_mib": process_rss_mib(pid) if pid else {},
            "python_peak_mib": round(peak_rss_mib(), 1),
            **queries,
            "gds_projections_mb": sum(g["mb"] for g in info.projections),
        }


def time_queries(
    settings: Settings, namespace: str, folder: Path, size: int, questions: int
) -> dict[str, Any]:
    """Time the corpus's questions whose passages the namespace holds: once, then again with
    their neighbourhoods in the page cache. Run in a fresh process (see `measure_size`)."""
    from terag_bench.scoring import percentile, percentile_ms, recall_at_k
    from terag_neo4j.client import TeragClient

    client = TeragClient(settings, namespace=namespace, extractor="spacy")
    use_synthetic_embedder(client)
    with client:
        r = client.retriever
        r.drop_projections(namespace)
        # The count the retriever itself reads (the namespace node's), not `stats()`, whose
        # full count takes seconds at 1M and which `measure_size` takes once anyway.
        [state] = client.store.read("namespace_version", namespace=namespace)
        passages = int(state["passages"] or 0)
        t = time.perf_counter()
        if r.scope(passages) == "global":  # a local walk projects per query
            r.ensure_projection(namespace)
        projection_s = time.perf_counter() - t
        qs = [json.loads(line) for line in (folder / "questions.jsonl").open(encoding="utf-8")]
        qs = [q for q in qs if int(q["id"][1:]) < size][:questions]
        totals: list[float] = []
        pagerank: list[float] = []
        recall: list[float] = []
        local_rels: list[int] = []
        walks: set[str] = set()
        if qs:
            client.retrieve(qs[0]["question"])  # warm-up: query plans, passage vectors
        for q in qs:
            t = time.perf_counter()
            res = client.retrieve(q["question"], top_k=5)
            totals.append(time.perf_counter() - t)
            pagerank.append(res.timings.get("pagerank", 0.0))
            walks.add(res.walk)
            if res.walk == "local":
                local_rels.append(res.graph_relationships)
            recall.append(recall_at_k([p.id for p in res.passages], q["gold_ids"], 5))
        # The first pass reads each question's neighbourhood from disk; the second finds it in
        # the page cache. Both are reported: which one a service sees depends on its traffic.
        warm: list[float] = []
        for q in qs:
            t = time.perf_counter()
            client.retrieve(q["question"], top_k=5)
            warm.append(time.perf_counter() - t)
    return {
        "projection_s": round(projection_s, 2),
        "questions": len(qs),
        "retrieval_ms": {"p50": percentile_ms(totals, 50), "p95": percentile_ms(totals, 95)},
        "retrieval_warm_ms": {"p50": percentile_ms(warm, 50), "p95": percentile_ms(warm, 95)},
        "pagerank_ms": {"p50": percentile_ms(pagerank, 50), "p95": percentile_ms(pagerank, 95)},
        "walk": "/".join(sorted(walks)),
        "local_relationships_p50": percentile(local_rels, 50) if local_rels else None,
        "recall_at_5": round(float(np.mean(recall)), 3) if recall else None,
        "python_query_peak_mib": round(peak_rss_mib(), 1),
    }


def plot(state: dict[str, Any], path: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib is not installed: no plot")
        return None
    panels: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
        ("ingest passages/s", lambda r: r["ingest_passages_per_s"]),
        ("store MiB added", lambda r: r.get("store_added_mib")),
        ("Neo4j peak RSS MiB", lambda r: r["neo4j_mib"].get("VmHWM")),
        ("projection s", lambda r: r["projection_s"]),
        ("retrieval p50 ms", lambda r: r["retrieval_ms"]["p50"]),
        ("retrieval p95 ms", lambda r: r["retrieval_ms"]["p95"]),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    for ax, (title, get) in zip(axes.ravel(), panels, strict=True):
        for profile, sizes in state.get("results", {}).items():
            rows = sorted(sizes.values(), key=lambda r: r["passages"])
            pts = [(r["passages"], get(r)) for r in rows if get(r) is not None]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=profile)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("passages")
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend()
    fig.suptitle("terag-neo4j scale bench (synthetic Zipf corpora)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def run_scale(
    settings: Settings,
    profiles: list[str],
    sizes: list[int],
    out: Path,
    workdir: Path,
    questions: int = 100,
    seed: int = 0,
    stop_after_s: float | None = None,
    prefix: str = "scale",
) -> dict[str, Any]:
    """Measure each profile at each size (namespaces `<prefix>_<profile>`), resuming from
    `out/scale.json`; returns the state written there."""
    from terag_bench.synthetic import PROFILES, write_corpus

    out.mkdir(parents=True, exist_ok=True)
    state_path = out / "scale.json"
    state: dict[str, Any] = (
        json.loads(state_path.read_text(encoding="utf-8")) if state_path.is_file() else {}
    )
    state.setdefault("results", {})
    state["machine"] = {
        "cpus": os.cpu_count(),
        "neo4j_heap": settings.neo4j_heap,
        "neo4j_pagecache": settings.neo4j_pagecache,
    }
    if "store_baseline_mib" not in state:
        # The database holds other namespaces too: sizes are reported above what was there.
        _, db = _local_server(settings)
        state["store_baseline_mib"] = _dir_mib(db) if db else None
    started = time.monotonic()
    for profile in profiles:
        done = state["results"].setdefault(profile, {})
        for size in sorted(sizes):
            if str(size) in done:
                log.info("%s %d: done earlier, kept", profile, size)
                continue
            if stop_after_s is not None and time.monotonic() - started > stop_after_s:
                log.warning(
                    "time budget spent: stopping before %s %d (rerun to resume)", profile, size
                )
                state_path.write_text(json.dumps(state, indent=2), encoding="utf-8")
                return state
            folder = workdir / f"{profile}_{size}_s{seed}"
            t = time.perf_counter()
            write_corpus(folder, PROFILES[profile], size, seed, questions=max(questions * 2, 200))
            log.info("%s %d: corpus ready in %.0fs", profile, size, time.perf_counter() - t)
            row = measure_size(settings, profile, size, folder, questions, prefix)
            base = state["store_baseline_mib"]
            row["store_added_mib"] = (
                round(row["store_mib"] - base, 1) if row["store_mib"] and base else None
            )
            done[str(size)] = row
            state_path.write_text(json.dumps(state, indent=2), encoding="utf-8")
            plot(state, out / "scale.png")
            log.info("%s %d: %s", profile, size, row)
            for other in workdir.glob(f"{profile}_*_s{seed}"):
                other_size = other.name.split("_")[1]
                if other_size.isdigit() and int(other_size) < size:  # held by this corpus
                    shutil.rmtree(other, ignore_errors=True)
    return state


def table(state: dict[str, Any]) -> str:
    lines = [
        "| profile | passages | concepts | HAS_PASSAGE | CO_OCCURRENCE | ingest p/s | store MiB+ "
        "| Neo4j peak MiB | ingest Python MiB | query Python MiB | projection s | p50 ms | p95 ms "
        "| warm p50 ms | warm p95 ms | R@5 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for profile, sizes in state.get("results", {}).items():
        for r in sorted(sizes.values(), key=lambda r: r["passages"]):
            warm = r.get("retrieval_warm_ms", {})
            lines.append(
                f"| {profile} | {r['passages']:,} | {r['concepts']:,} | {r['has_passage']:,} | "
                f"{r['co_occurrence']:,} | {r['ingest_passages_per_s']} | {r.get('store_added_mib')} | "
                f"{r['neo4j_mib'].get('VmHWM', 0):.0f} | {r['python_peak_mib']} | "
                f"{r.get('python_query_peak_mib', '-')} | {r['projection_s']} | "
                f"{r['retrieval_ms']['p50']} | {r['retrieval_ms']['p95']} | "
                f"{warm.get('p50', '-')} | {warm.get('p95', '-')} | {r['recall_at_5']} |"
            )
    return "\n".join(lines)


EPILOG = """\
examples:
  terag bench-scale                                  both profiles at 10k, 100k and 1M passages
  terag bench-scale --profile llm --sizes 10000 100000 --stop-after 30
  terag bench-scale --table                          print the table of what is measured so far

Rerun the same command to resume. The corpora go to $TERAG_HOME/scale (a 1M spacy corpus is
about 1 GB); results to bench/results/scale/scale.json and scale.png. The local Neo4j's heap
and page cache are TERAG_NEO4J_HEAP / TERAG_NEO4J_PAGECACHE (restart it after changing them).
"""


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-scale",
        help="ingest, store, memory, projection and latency at 10k, 100k, 1M synthetic passages",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument(
        "--profile",
        nargs="+",
        choices=["spacy", "llm"],
        default=["llm", "spacy"],
        help="concept density: spacy (~15/passage) or llm (~7/passage)",
    )
    s.add_argument(
        "--sizes",
        nargs="+",
        type=int,
        default=list(DEFAULT_SIZES),
        help="corpus sizes in passages (default 10000 100000 1000000)",
    )
    s.add_argument("--questions", type=int, default=100, help="questions timed per size")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", type=Path, default=Path("bench") / "results" / "scale")
    s.add_argument(
        "--workdir", type=Path, help="where corpora are generated (default $TERAG_HOME/scale)"
    )
    s.add_argument(
        "--stop-after",
        type=float,
        metavar="MINUTES",
        help="start no new size after this many minutes (rerun to resume)",
    )
    s.add_argument(
        "--prefix", default="scale", help="namespaces are PREFIX_<profile> (default scale)"
    )
    s.add_argument("--table", action="store_true", help="print the results so far and exit")
    s.set_defaults(func=cmd_scale)


def cmd_scale(args: argparse.Namespace) -> int:
    settings = Settings()
    state_path = args.out / "scale.json"
    if args.table:
        if not state_path.is_file():
            raise InputNotFound(f"no results yet at {state_path}: run terag bench-scale")
        print(table(json.loads(state_path.read_text(encoding="utf-8"))))
        return 0
    for size in args.sizes:
        if size < 1:
            raise SettingsError(f"--sizes must be at least 1, got {size}")
    if settings.neo4j_uri is None:
        from terag_neo4j.local import neo4j as local

        local.start(settings)
    state = run_scale(
        settings,
        args.profile,
        args.sizes,
        args.out,
        args.workdir or Path(settings.home).expanduser() / "scale",
        args.questions,
        args.seed,
        args.stop_after * 60 if args.stop_after is not None else None,
        args.prefix,
    )
    print(table(state))
    print(f"wrote {state_path} and {args.out / 'scale.png'}")
    return 0


def use_synthetic_embedder(client: Any) -> None:
    """Embed with `SyntheticEmbedder` in place of TERAG_EMBEDDING_MODEL, and for the namespaces
    that recorded it."""
    from terag_bench.synthetic import SyntheticEmbedder
    from terag_neo4j.embeddings import model_id

    synthetic = SyntheticEmbedder()
    client._embedders[model_id(client.settings.embedding_model)] = synthetic
    client._embedders[synthetic.model_name] = synthetic
