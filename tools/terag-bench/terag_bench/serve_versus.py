"""`terag bench-serve --baseline-rev REV`: this checkout's service and an older commit's, in
turns, on the same Neo4j.

Throughput moves with the machine's load and with Neo4j warming up, so two runs minutes apart
do not compare. Here each round starts the current service and the baseline's (its code from a
`git worktree` under the system's temp folder, as `terag bench-latency --baseline-rev` makes it,
on the same virtual environment), the order swapped every round. Each service first answers
`warmup` seconds of questions unmeasured (its projection, its caches, Neo4j's compiled code),
then each client count runs for `seconds`. Both run with the result cache off, so every query
is computed. Reported per side and client count: queries per second over all rounds (and per
CPU core), the rounds' p50 and p95, errors; and the current side's throughput over the
baseline's.
"""

from __future__ import annotations

import logging
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from terag_bench.interleave import REPO, worktree
from terag_bench.serve_clients import run_clients, running_service, summarize

log = logging.getLogger(__name__)

NO_CACHE = {"TERAG_QUERY_CACHE_SIZE": "0"}


def compare_services(
    namespace: str,
    questions: list[str],
    rev: str,
    clients: list[int],
    seconds: float,
    rounds: int = 2,
    warmup: float = 15.0,
    top_k: int = 5,
    api_key: str | None = None,
    ready_s: float = 600.0,
) -> dict[str, Any]:
    """Run the current service and `rev`'s in turns (see the module's docstring)."""
    base_tree, sha = worktree(rev)
    sides = [("current", REPO), (f"baseline {sha}", base_tree)]
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {
        n: {c: [] for c in clients} for n, _ in sides
    }
    log_path = Path(tempfile.gettempdir()) / f"terag-bench-serve-{os.getpid()}.log"
    for r in range(rounds):
        for name, tree in sides if r % 2 == 0 else sides[::-1]:
            with running_service(None, None, api_key, log_path, ready_s, tree, NO_CACHE) as tgt:
                run_clients(tgt, [namespace], questions, 1, warmup, top_k)
                for n in clients:
                    calls, wall = run_clients(tgt, [namespace], questions, n, seconds, top_k)
                    row = summarize(calls, wall)
                    runs[name][n].append(row)
                    log.info(
                        "round %d, %s, %d client(s): %s q/s", r + 1, name, n, row["queries_per_s"]
                    )
    cores = os.cpu_count() or 1
    out: dict[str, Any] = {
        "baseline_rev": sha,
        "namespace": namespace,
        "questions": len(questions),
        "rounds": rounds,
        "seconds": seconds,
        "warmup_seconds": warmup,
        "cores": cores,
        "load_average": os.getloadavg(),
        "sides": {},
    }
    for name, _ in sides:
        out["sides"][name] = {}
        for n in clients:
            rows = runs[name][n]
            done = sum(x["queries"] for x in rows)
            wall = sum(x["wall_s"] for x in rows)
            out["sides"][name][str(n)] = {
                "queries_per_s": round(done / wall, 2) if wall else None,
                "queries_per_s_per_core": round(done / wall / cores, 2) if wall else None,
                "p50_ms": _median(x["p50_ms"] for x in rows),
                "p95_ms": _median(x["p95_ms"] for x in rows),
                "errors": sum(x["error_count"] for x in rows),
                "rounds": [x["queries_per_s"] for x in rows],
            }
    current, baseline = (out["sides"][name] for name, _ in sides)
    out["ratio_throughput"] = {
        str(n): round(current[str(n)]["queries_per_s"] / baseline[str(n)]["queries_per_s"], 3)
        if current[str(n)]["queries_per_s"] and baseline[str(n)]["queries_per_s"]
        else None
        for n in clients
    }
    return out


def _median(values: Any) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 1) if known else None


def report(out: dict[str, Any]) -> str:
    names = list(out["sides"])
    lines = [
        f"| clients | {names[0]}: q/s, p50 / p95 ms | {names[1]}: q/s, p50 / p95 ms | ratio |",
        "|---:|---|---|---:|",
    ]
    for n, ratio in out["ratio_throughput"].items():
        a, b = (out["sides"][name][n] for name in names)
        lines.append(
            f"| {n} | {a['queries_per_s']}, {a['p50_ms']} / {a['p95_ms']} | "
            f"{b['queries_per_s']}, {b['p50_ms']} / {b['p95_ms']} | {ratio} |"
        )
    lines.append(
        f"\n{out['rounds']} rounds of {out['seconds']:.0f} s a client count, after "
        f"{out['warmup_seconds']:.0f} s of warm-up per service; load average {out['load_average']}"
    )
    return "\n".join(lines)
