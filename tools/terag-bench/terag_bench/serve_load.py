"""`terag bench-serve`: the HTTP service under 1, 4, 8 and 16 concurrent clients.

Starts `terag serve` on a free loopback port (or loads the loopback service `--url` names),
checks the namespace is there (by default the one `terag bench-index 2wikimultihopqa` builds),
measures in-process `TeragClient.retrieve` on the same questions first (HTTP's reference), then
runs each client count for `--seconds`: queries per second, p50/p95/p99, errors and the service
process's RSS before and after. `--mixed` adds a run whose clients query while a few hundred
passages ingest through the documents route (errors; answers consistent with the state before
or after the write); `--soak SECONDS` one at 8 clients while small documents are uploaded
(errors, uploads lost, RSS growth). Uploads go to a namespace of the bench's own, dropped after.
Writes JSON and a PNG under --out and prints a table.

`--baseline-rev REV` compares instead: this checkout's service and REV's, in turns, each client
count in every round (`terag_bench.serve_versus`), with the result cache off on both.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"
DEFAULT_DATASET = "2wikimultihopqa"
HELP = "HTTP service throughput, latency, errors and memory under concurrent clients"


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-serve",
        help=HELP,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("dataset", nargs="?", metavar="DATASET", help=f"default {DEFAULT_DATASET}")
    s.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8, 16])
    s.add_argument("--seconds", type=float, default=60.0, help="per client count (default 60)")
    s.add_argument("--url", help="a running loopback service (default: start one)")
    s.add_argument("--pid", type=int, help="with --url: its process id, for RSS")
    s.add_argument("--api-key", default=os.environ.get("TERAG_API_KEY"))
    s.add_argument("--namespace", help="default: the one `terag bench-index DATASET` builds")
    s.add_argument("--questions-file", type=Path, help="questions, one a line (or JSONL)")
    s.add_argument("--top-k", type=int, default=5)
    s.add_argument("--inprocess-seconds", type=float, default=30.0, help="0: skip")
    s.add_argument("--mixed", action="store_true", help="also: queries while an upload ingests")
    s.add_argument("--mixed-passages", type=int, default=300)
    s.add_argument("--mixed-clients", type=int, default=4)
    s.add_argument("--soak", type=float, default=0.0, metavar="SECONDS", help="8 clients")
    s.add_argument("--soak-uploads", type=int, default=20)
    s.add_argument("--upload-namespace", help="default: benchserve_<pid>, dropped after")
    s.add_argument("--ready-timeout", type=float, default=600.0)
    s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    s.add_argument("--name", help="result file stem (default serve_<dataset>)")
    s.add_argument("--no-plot", action="store_true")
    s.add_argument(
        "--baseline-rev", metavar="REV", help="compare with this commit's service, in turns"
    )
    s.add_argument("--rounds", type=int, default=2, help="with --baseline-rev (default 2)")
    s.add_argument(
        "--warmup", type=float, default=15.0, help="with --baseline-rev: seconds per service"
    )
    s.set_defaults(func=cmd_bench_serve)


def _questions(path: Path) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line:
            out.append(str(json.loads(line)["question"]) if line.startswith("{") else line)
    return out


def _inputs(args: argparse.Namespace) -> tuple[str, str, list[str], list[dict[str, str]]]:
    """The run's name, namespace, questions and the texts its uploads use."""
    from terag_bench.serve_clients import BenchServeError

    dataset = None
    if args.dataset or not args.questions_file:
        from terag_bench.datasets import load_dataset

        dataset = load_dataset(args.dataset or DEFAULT_DATASET)
    if args.questions_file:
        questions = _questions(args.questions_file)
    else:
        assert dataset is not None
        questions = [q.question for q in dataset.questions]
    if not questions:
        raise BenchServeError("no questions to ask")
    if dataset is not None:
        from terag_bench.ingest import index_namespace

        ns = args.namespace or index_namespace(dataset.name, "spacy")
        texts = [{"text": d.text, "title": d.title} for d in dataset.documents]
        name = dataset.name
    else:
        if not args.namespace:
            raise BenchServeError("--questions-file without a DATASET needs --namespace")
        ns, name = args.namespace, "questions"
        texts = [
            {"text": f"Bench upload {i} says that river {i} flows past town {i}.", "title": ""}
            for i in range(args.mixed_passages + args.soak_uploads)
        ]
    return name, ns, questions, texts


def _docs(texts: list[dict[str, str]], prefix: str, start: int, n: int) -> list[dict[str, str]]:
    pick = texts[start : start + n] or texts[:n]
    return [{"id": f"{prefix}-{i}", **t} for i, t in enumerate(pick)]


def cmd_bench_serve(args: argparse.Namespace) -> int:
    from terag_bench import serve_phases as phases
    from terag_bench.runinfo import write_result
    from terag_bench.serve_clients import (
        drop_namespace,
        ensure_namespace,
        run_clients,
        running_service,
        summarize,
    )

    name, ns, questions, texts = _inputs(args)
    if args.baseline_rev:
        return _versus(args, name, ns, questions)
    stem = args.name or f"serve_{name}"
    upload_ns = args.upload_namespace or f"benchserve_{os.getpid()}"
    result: dict[str, Any] = {
        "dataset": name,
        "namespace": ns,
        "questions": len(questions),
        "top_k": args.top_k,
        "load_average_start": os.getloadavg(),
    }
    serve_log = Path(tempfile.gettempdir()) / f"terag-bench-serve-{os.getpid()}.log"
    with running_service(args.url, args.pid, args.api_key, serve_log, args.ready_timeout) as tgt:
        result.update(url=tgt.url, service_pid=tgt.pid, started_service=args.url is None)
        result["namespace_stats"] = {
            k: v
            for k, v in ensure_namespace(tgt, ns, create=False).items()
            if k in ("passages", "concepts", "extractor")
        }
        baseline: phases.Baseline = {}
        if args.inprocess_seconds > 0:
            extractor = os.environ.get("TERAG_EXTRACTOR", "spacy")
            result["inprocess"], baseline = phases.inprocess(
                ns, questions, args.inprocess_seconds, args.top_k, extractor
            )
        runs = result["runs"] = []
        for n in args.clients:
            rss0 = tgt.rss_mib()
            calls, wall = run_clients(tgt, [ns], questions, n, args.seconds, args.top_k)
            row = {"clients": n, "seconds": args.seconds, **summarize(calls, wall)}
            row.update(rss_start_mib=rss0, rss_end_mib=tgt.rss_mib())
            row["same_as_before"] = phases.compare(baseline, calls, ns)
            phases.record(baseline, calls, ns)
            runs.append(row)
            log.info("%d client(s): %s q/s, p50 %s ms", n, row["queries_per_s"], row["p50_ms"])
            write_result(args.out, stem, result)  # what is measured survives a later failure
        _derived(result)
        try:
            if args.mixed:
                ensure_namespace(tgt, upload_ns, create=True)
                docs = _docs(texts, "mixed", 0, args.mixed_passages)
                result["mixed"] = phases.mixed(
                    tgt, ns, upload_ns, questions, docs, args.mixed_clients, args.seconds,
                    args.top_k, baseline,
                )  # fmt: skip
                write_result(args.out, stem, result)
            if args.soak > 0:
                ensure_namespace(tgt, upload_ns, create=True)
                docs = _docs(texts, "soak", args.mixed_passages, args.soak_uploads)
                result["soak"] = phases.soak(
                    tgt, ns, upload_ns, questions, docs, 8, args.soak, args.top_k
                )
        finally:
            if args.mixed or args.soak > 0:
                drop_namespace(tgt, upload_ns)
        result["service_rss_end_mib"] = tgt.rss_mib()
    result["load_average_end"] = os.getloadavg()
    path = write_result(args.out, stem, result)
    print(table(result))
    print(f"wrote {path}")
    if not args.no_plot:
        print(f"wrote {plot(result, args.out / f'{stem}.png')}")
    return 0


def _versus(args: argparse.Namespace, name: str, ns: str, questions: list[str]) -> int:
    from terag_bench.runinfo import write_result
    from terag_bench.serve_clients import BenchServeError
    from terag_bench.serve_versus import compare_services, report

    if args.url or args.mixed or args.soak > 0:
        raise BenchServeError(
            "--baseline-rev starts both services itself: no --url, --mixed, --soak"
        )
    out = compare_services(
        ns, questions, args.baseline_rev, args.clients, args.seconds, args.rounds, args.warmup,
        args.top_k, args.api_key, args.ready_timeout,
    )  # fmt: skip
    path = write_result(args.out, args.name or f"serve_{name}_vs_{out['baseline_rev']}", out)
    print(report(out))
    print(f"wrote {path}")
    return 0


def _derived(result: dict[str, Any]) -> None:
    runs = result["runs"]
    base = runs[0]["queries_per_s"] if runs else 0
    for r in runs:
        r["throughput_vs_first"] = round(r["queries_per_s"] / base, 2) if base else None
    inproc = result.get("inprocess")
    one = next((r for r in runs if r["clients"] == 1), None)
    if inproc and one and one["p50_ms"] is not None and inproc["p50_ms"] is not None:
        result["http_p50_minus_inprocess_p50_ms"] = round(one["p50_ms"] - inproc["p50_ms"], 1)


def table(result: dict[str, Any]) -> str:
    head = f"{'clients':>7} {'q/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>6}"
    lines = [head + f" {'RSS start→end MiB':>18}"]
    for r in result["runs"]:
        rss = f"{r['rss_start_mib'] or 0:.0f}→{r['rss_end_mib'] or 0:.0f}"
        lines.append(
            f"{r['clients']:>7} {r['queries_per_s']:>7} {r['p50_ms']!s:>8} {r['p95_ms']!s:>8} "
            f"{r['p99_ms']!s:>8} {r['error_count']:>6} {rss:>18}"
        )
    if "inprocess" in result:
        ip = result["inprocess"]
        lines.append(f"in-process: p50 {ip['p50_ms']} ms, p95 {ip['p95_ms']} ms ({ip['queries']})")
    if "http_p50_minus_inprocess_p50_ms" in result:
        lines.append(f"HTTP p50 - in-process p50: {result['http_p50_minus_inprocess_p50_ms']} ms")
    if "mixed" in result:
        m = result["mixed"]
        lines.append(
            f"mixed ({m['clients']} clients): {m['queries_per_s']} q/s, p95 {m['p95_ms']} ms, "
            f"errors {m['error_count']}, {m['queries_during_ingest']} queries during a "
            f"{m['ingest_s']} s ingest ({m['ingest_state']}), read answers "
            f"{m['read_namespace_answers']}, inconsistent {m['upload_namespace_inconsistent']}, "
            f"documents missing {m['documents_missing_count']}"
        )
    if "soak" in result:
        s = result["soak"]
        lines.append(
            f"soak ({s['clients']} clients, {s['seconds']:.0f} s): {s['queries_per_s']} q/s, "
            f"p99 {s['p99_ms']} ms, errors {s['error_count']}, uploads lost "
            f"{s['uploads_lost']}/{s['uploads']}, RSS {s['rss_start_mib']}→{s['rss_end_mib']} "
            f"MiB ({s['rss_growth_pct']} %)"
        )
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = result["runs"]
    n = [r["clients"] for r in runs]
    panels = 3 if result.get("soak", {}).get("rss_samples") else 2
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4))
    axes[0].plot(n, [r["queries_per_s"] for r in runs], marker="o")
    axes[0].set(xlabel="concurrent clients", ylabel="queries / s", title="throughput")
    for key in ("p50_ms", "p95_ms", "p99_ms"):
        axes[1].plot(n, [r[key] for r in runs], marker="o", label=key[:3])
    if result.get("inprocess"):
        axes[1].axhline(result["inprocess"]["p50_ms"], ls="--", c="grey", label="in-process p50")
    axes[1].set(xlabel="concurrent clients", ylabel="ms", title="retrieve latency (HTTP)")
    axes[1].legend()
    if panels == 3:
        t, mib = zip(*result["soak"]["rss_samples"], strict=True)
        axes[2].plot(t, mib)
        axes[2].set(xlabel="s", ylabel="MiB", title="service RSS during the soak")
    fig.suptitle(f"terag serve: {result['dataset']} ({result['namespace']})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
