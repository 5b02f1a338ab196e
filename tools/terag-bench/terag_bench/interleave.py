"""`terag bench-latency --baseline-rev REV`: this checkout and an older commit, interleaved.

Timings on a shared machine move with its load, so two runs minutes apart do not compare. Here
both trees answer in one run: each in a worker process of its own (the other commit's code from a
`git worktree` under the system's temp folder, on the same virtual environment and the same
Neo4j), the questions alternating between them one by one (each going first every other time).
Then throughput: rounds of `clients` threads sharing one client (as a service's requests do),
again alternating. Reported per side: single-client p50/p95 and the stage table, queries per
second over all clients and per CPU core, and CPU time per query (the worker's own and
Neo4j's, which the machine's other load does not add to); and how many questions got the same
top-10 from both. Both sides run with the result cache off: every query is computed.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from terag_bench.scoring import percentile_ms
from terag_neo4j.errors import TeragError

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[3]  # the checkout: tools/terag-bench/terag_bench


class BaselineError(TeragError, RuntimeError):
    """The baseline commit could not be checked out or its worker failed."""


# Runs in each tree's worker: only APIs both trees have (Settings, TeragClient.retrieve).
WORKER = r"""
import json, os, sys, threading, time
import terag_neo4j
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings

def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

cfg = json.loads(sys.stdin.readline())
settings = Settings().with_overrides(
    namespace=cfg["namespace"], extractor="spacy", preset=cfg["preset"], retrieval=cfg["overrides"]
)
out = sys.stdout
with TeragClient(settings) as client:
    client.retrieve(cfg["warmup"])
    out.write(json.dumps({"ready": terag_neo4j.__file__}) + "\n"); out.flush()
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "one":
            t = time.perf_counter()
            res = client.retrieve(cmd["question"], top_k=cmd["top_k"])
            total = time.perf_counter() - t
            out.write(json.dumps({"total": total, "timings": res.timings,
                                  "ids": [p.id for p in res.passages]}) + "\n")
        else:
            qs, n, end = cmd["questions"], cmd["clients"], time.time() + cmd["seconds"]
            lat = [[] for _ in range(n)]
            def loop(j):
                i = j * len(qs) // n
                while time.time() < end:
                    t = time.perf_counter()
                    client.retrieve(qs[i % len(qs)], top_k=cmd["top_k"])
                    lat[j].append(time.perf_counter() - t)
                    i += 1
            c0, n0, w0 = time.process_time(), cpu_ticks(cmd["neo4j_pid"]) if cmd["neo4j_pid"] else 0.0, time.perf_counter()
            threads = [threading.Thread(target=loop, args=(j,)) for j in range(n)]
            for th in threads: th.start()
            for th in threads: th.join()
            wall = time.perf_counter() - w0
            neo = cpu_ticks(cmd["neo4j_pid"]) - n0 if cmd["neo4j_pid"] else None
            out.write(json.dumps({"latencies": [x for l in lat for x in l], "wall": wall,
                                  "cpu": time.process_time() - c0, "neo4j_cpu": neo}) + "\n")
        out.flush()
"""


def worktree(rev: str) -> tuple[Path, str]:
    """A checkout of `rev` (kept under the temp folder for the next run) and its short hash."""
    try:
        sha = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", f"{rev}^{{commit}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        raise BaselineError(f"--baseline-rev {rev!r} is not a commit of {REPO}: {e}") from e
    path = Path(tempfile.gettempdir()) / f"terag-baseline-{sha}"
    if not (path / "terag_neo4j").is_dir():
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), sha],
            capture_output=True,
            text=True,
            check=True,
        )
    return path, sha


@dataclass
class Side:
    name: str
    tree: Path
    proc: subprocess.Popen[str] | None = None
    totals: list[float] = field(default_factory=list)
    stages: dict[str, list[float]] = field(default_factory=dict)
    top: list[list[str]] = field(default_factory=list)
    load: list[dict[str, Any]] = field(default_factory=list)

    def start(self, cfg: dict[str, Any]) -> None:
        env = {**os.environ, "PYTHONPATH": str(self.tree), "TERAG_QUERY_CACHE_SIZE": "0"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER],
            cwd=self.tree,
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        reply = self.ask(cfg)
        log.info("%s runs %s", self.name, reply["ready"])

    def ask(self, cmd: dict[str, Any]) -> dict[str, Any]:
        assert self.proc is not None
        stdin: IO[str] = self.proc.stdin  # type: ignore[assignment]
        stdout: IO[str] = self.proc.stdout  # type: ignore[assignment]
        stdin.write(json.dumps(cmd) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise BaselineError(f"the {self.name} worker ({self.tree}) stopped; see its errors")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=60)


def _neo4j_pid() -> int | None:
    from terag_neo4j.config import Settings

    settings = Settings()
    if settings.neo4j_uri is not None:
        return None
    from terag_neo4j.local import neo4j as local

    return local.status(settings).pid


def compare(
    namespace: str,
    preset: str,
    overrides: dict[str, str],
    questions: list[str],
    rev: str,
    clients: int,
    seconds: float,
    rounds: int = 2,
    top_k: int = 10,
    current_rev: str | None = None,
) -> dict[str, Any]:
    """Interleave this tree (or the commit `current_rev`) and `rev` over `questions` (see the
    module's docstring)."""
    base_tree, sha = worktree(rev)
    current = Side("current", REPO)
    if current_rev:
        tree, current_sha = worktree(current_rev)
        current = Side(f"current {current_sha}", tree)
    sides = [current, Side(f"baseline {sha}", base_tree)]
    cfg = {"namespace": namespace, "preset": preset, "overrides": overrides, "warmup": questions[0]}
    pid = _neo4j_pid()
    cores = os.cpu_count() or 1
    try:
        for s in sides:
            s.start(cfg)
        for i, q in enumerate(questions):
            for s in sides if i % 2 == 0 else sides[::-1]:
                r = s.ask({"op": "one", "question": q, "top_k": top_k})
                s.totals.append(r["total"])
                s.top.append(r["ids"])
                for k, v in r["timings"].items():
                    s.stages.setdefault(k, []).append(v)
        for i in range(rounds * 2):
            s = sides[i % 2] if (i // 2) % 2 == 0 else sides[1 - i % 2]
            s.load.append(
                s.ask(
                    {
                        "op": "load",
                        "questions": questions,
                        "clients": clients,
                        "seconds": seconds,
                        "top_k": top_k,
                        "neo4j_pid": pid,
                    }
                )
            )
    finally:
        for s in sides:
            s.stop()
    same = sum(a == b for a, b in zip(sides[0].top, sides[1].top, strict=True))
    out: dict[str, Any] = {
        "baseline_rev": sha,
        "questions": len(questions),
        "clients": clients,
        "seconds_per_round": seconds,
        "rounds": rounds,
        "cores": cores,
        "load_average": os.getloadavg(),
        "same_top10": same,
        "same_top10_share": round(same / len(questions), 4),
        "sides": {},
    }
    for s in sides:
        done = sum(len(x["latencies"]) for x in s.load)
        wall = sum(x["wall"] for x in s.load)
        cpu = sum(x["cpu"] for x in s.load)
        neo = sum(x["neo4j_cpu"] or 0.0 for x in s.load)
        lat = [v for x in s.load for v in x["latencies"]]
        out["sides"][s.name] = {
            "single_p50_ms": percentile_ms(s.totals, 50),
            "single_p95_ms": percentile_ms(s.totals, 95),
            "stages_p50_ms": {k: percentile_ms(v, 50) for k, v in s.stages.items()},
            "throughput_qps": round(done / wall, 2) if wall else None,
            "throughput_qps_per_core": round(done / wall / cores, 2) if wall else None,
            "load_p50_ms": percentile_ms(lat, 50),
            "load_p95_ms": percentile_ms(lat, 95),
            "cpu_ms_per_query_python": round(1000 * cpu / done, 1) if done else None,
            "cpu_ms_per_query_neo4j": round(1000 * neo / done, 1) if done and pid else None,
        }
    a, b = (out["sides"][s.name] for s in sides)
    out["ratio_single_p50"] = round(a["single_p50_ms"] / b["single_p50_ms"], 3)
    if a["throughput_qps"] and b["throughput_qps"]:
        out["ratio_throughput"] = round(a["throughput_qps"] / b["throughput_qps"], 3)
    return out


def report(out: dict[str, Any]) -> str:
    names = list(out["sides"])
    a, b = (out["sides"][n] for n in names)
    lines = [f"| | {names[0]} | {names[1]} |", "|---|---:|---:|"]
    for key in (
        "single_p50_ms",
        "single_p95_ms",
        "throughput_qps",
        "throughput_qps_per_core",
        "load_p50_ms",
        "load_p95_ms",
        "cpu_ms_per_query_python",
        "cpu_ms_per_query_neo4j",
    ):
        lines.append(f"| {key} | {a[key]} | {b[key]} |")
    for k in sorted(set(a["stages_p50_ms"]) | set(b["stages_p50_ms"])):
        lines.append(
            f"| stage {k} p50 ms | {a['stages_p50_ms'].get(k, '-')} | "
            f"{b['stages_p50_ms'].get(k, '-')} |"
        )
    lines.append(
        f"\nsingle-client p50 ratio {out['ratio_single_p50']}, throughput ratio "
        f"{out.get('ratio_throughput')} ({out['clients']} clients), same top-10 "
        f"{out['same_top10']}/{out['questions']}; load average {out['load_average']}"
    )
    return "\n".join(lines)
