"""`terag bench-soak`: mixed traffic from several keys against two `terag serve` processes on one
Neo4j, for `--seconds` (default 10 minutes), while Neo4j is restarted once and one of the two
services is killed with SIGKILL twice (and started again each time).

Each key has a namespace of its own and three clients: one retrieves, one uploads small
documents of new ids, one polls its jobs; each request goes to either service, has a client
timeout, and is counted however it ends. An upload refused or cut off is sent again (the same
ids), as a client would; so are the documents of a job that ends failed. At the end every job is
waited for and every namespace listed: each document id accepted must be stored, once.

Reports errors by kind, requests that never ended (0: every request has a timeout), documents
accepted against documents stored, p50/p99 latency per kind, each service's RSS at start and end
(and its pids), and the load average; prints them and writes JSON under --out.

Needs the managed local Neo4j (`terag server start`; NEO4J_URI unset) to restart it; with
NEO4J_URI set, pass --no-neo4j-restart.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from terag_neo4j.errors import TeragError

log = logging.getLogger(__name__)

HELP = "Mixed traffic on two services for minutes while Neo4j restarts and one is killed twice"
DEFAULT_OUT = Path("bench") / "results"
REQUEST_TIMEOUT_S = 30.0  # every request's client timeout: none can hang the soak
FINISHED = ("succeeded", "failed", "cancelled")
QUESTIONS = (
    "Which river flows past town {n}?",
    "What does mill {n} grind?",
    "Who keeps the lighthouse of harbour {n}?",
)


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-soak",
        help=HELP,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("--seconds", type=float, default=600.0, help="traffic time (default 600)")
    s.add_argument("--keys", type=int, default=3, help="keys, each with its namespace (3)")
    s.add_argument("--docs-per-upload", type=int, default=2)
    s.add_argument("--upload-every", type=float, default=2.0, help="seconds between uploads")
    s.add_argument("--no-neo4j-restart", action="store_true", help="for a server not ours")
    s.add_argument("--settle", type=float, default=300.0, help="seconds to wait for jobs after")
    s.add_argument("--ready-timeout", type=float, default=600.0)
    s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    s.add_argument("--name", default="soak", help="result file stem (default soak)")
    s.set_defaults(func=cmd_bench_soak)


# ---------------------------------------------------------------------------- accounting


@dataclass(frozen=True)
class Request:
    """One request: its kind (retrieve, upload, poll, ...), which service, when it started
    (seconds into the soak), how long it took, and its outcome: "ok", or the error's kind (an
    HTTP status, or the client exception's class)."""

    kind: str
    service: int
    start: float
    seconds: float
    outcome: str


@dataclass
class Ledger:
    """Every request started and ended, and every document accepted; thread-safe."""

    requests: list[Request] = field(default_factory=list)
    started: int = 0
    accepted: dict[str, set[str]] = field(default_factory=dict)  # namespace -> document ids
    resent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self) -> None:
        with self.lock:
            self.started += 1

    def end(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)

    def accept(self, namespace: str, ids: Sequence[str]) -> None:
        with self.lock:
            self.accepted.setdefault(namespace, set()).update(ids)


def error_kind(status: int | None, exc: BaseException | None = None) -> str:
    """An outcome's kind: "ok" for 2xx, "HTTP <status>", or the exception's class name."""
    if exc is not None:
        return type(exc).__name__
    assert status is not None
    return "ok" if 200 <= status < 300 else f"HTTP {status}"


def account(
    ledger: Ledger, stored: dict[str, dict[str, int]], unfinished_jobs: int
) -> dict[str, Any]:
    """The soak's numbers from what was sent and what the namespaces hold (`stored`: namespace ->
    document id -> its passages). A document is stored once when it is listed and has exactly
    one passage (each soak document is one short passage)."""
    from terag_bench.scoring import percentile_ms

    reqs = ledger.requests
    by_kind: dict[str, list[Request]] = {}
    for r in reqs:
        by_kind.setdefault(r.kind, []).append(r)
    errors = Counter(f"{r.kind}: {r.outcome}" for r in reqs if r.outcome != "ok")
    accepted = {ns: set(ids) for ns, ids in ledger.accepted.items()}
    n_accepted = sum(len(ids) for ids in accepted.values())
    stored_ids = {ns: set(docs) for ns, docs in stored.items()}
    missing = sorted(
        f"{ns}/{d}" for ns, ids in accepted.items() for d in ids - stored_ids.get(ns, set())
    )
    unexpected = sorted(
        f"{ns}/{d}" for ns, ids in stored_ids.items() for d in ids - accepted.get(ns, set())
    )
    twice = sorted(f"{ns}/{d}" for ns, docs in stored.items() for d, n in docs.items() if n != 1)
    ok = [r.seconds for r in reqs if r.outcome == "ok"]
    return {
        "requests": len(reqs),
        "requests_never_ended": ledger.started - len(reqs),
        "errors": sum(errors.values()),
        "errors_by_kind": dict(errors.most_common()),
        "p50_ms": percentile_ms(ok, 50),
        "p99_ms": percentile_ms(ok, 99),
        "per_kind": {
            k: {
                "requests": len(rs),
                "errors": sum(r.outcome != "ok" for r in rs),
                "p50_ms": percentile_ms([r.seconds for r in rs if r.outcome == "ok"], 50),
                "p99_ms": percentile_ms([r.seconds for r in rs if r.outcome == "ok"], 99),
            }
            for k, rs in sorted(by_kind.items())
        },
        "documents_accepted": n_accepted,
        "documents_stored": sum(len(ids) for ids in stored_ids.values()),
        "documents_missing": missing[:20],
        "documents_missing_count": len(missing),
        "documents_unexpected_count": len(unexpected),
        "documents_not_stored_once": twice[:20],
        "documents_not_stored_once_count": len(twice),
        "documents_resent": ledger.resent,
        "jobs_unfinished": unfinished_jobs,
        "lost_nothing": (
            ledger.started == len(reqs)
            and not missing
            and not unexpected
            and not twice
            and unfinished_jobs == 0
        ),
    }


# ---------------------------------------------------------------------------- the services


class Services:
    """Two `terag serve` processes on free loopback ports, sharing a job queue of their own."""

    def __init__(self, env: dict[str, str], log_dir: Path, ready_s: float) -> None:
        from terag_bench.serve_clients import free_port

        self.env, self.log_dir, self.ready_s = env, log_dir, ready_s
        self.ports = [free_port(), free_port()]
        self.procs: list[subprocess.Popen[bytes] | None] = [None, None]
        self.pids: list[list[int]] = [[], []]
        self.rss_start: list[float | None] = [None, None]

    def url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i]}"

    def start(self, i: int, wait: bool = True) -> None:

        out = (self.log_dir / f"serve-{i}.log").open("ab")
        cmd = [sys.executable, "-m", "terag_neo4j.cli", "serve", "--port", str(self.ports[i])]
        proc = subprocess.Popen(cmd, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        self.procs[i] = proc
        self.pids[i].append(proc.pid)
        if wait:
            self.wait(i)

    def wait(self, i: int) -> None:
        from terag_bench.serve_clients import wait_ready

        proc = self.procs[i]
        assert proc is not None
        wait_ready(self.url(i), proc, self.ready_s)
        log.info("service %d ready (pid %d) on %s", i, proc.pid, self.url(i))

    def kill(self, i: int) -> None:
        proc = self.procs[i]
        if proc is not None:
            proc.kill()  # SIGKILL: no shutdown, its job's lease must run out
            proc.wait()

    def rss_mib(self, i: int) -> float | None:
        from terag_bench.runinfo import process_rss_mib

        proc = self.procs[i]
        mib = process_rss_mib(proc.pid).get("VmRSS") if proc and proc.poll() is None else None
        return round(mib, 1) if mib is not None else None

    def stop(self) -> None:
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


# ---------------------------------------------------------------------------- traffic


class Traffic:
    """Per key: a retriever, an uploader and a poller, each on its own thread and connection."""

    def __init__(
        self,
        services: Services,
        keys: dict[str, str],
        ledger: Ledger,
        docs_per_upload: int,
        upload_every: float,
    ) -> None:
        self.services, self.keys, self.ledger = services, keys, ledger
        self.docs_per_upload, self.upload_every = docs_per_upload, upload_every
        self.t0 = time.monotonic()
        self.stop = threading.Event()
        self.jobs: dict[str, tuple[str, list[dict[str, str]]]] = {}  # id -> namespace, docs
        self.done_jobs: dict[str, str] = {}
        self.lock = threading.Lock()
        self.rng = random.Random(7)

    def request(
        self, kind: str, key: str, method: str, path: str, body: Any = None
    ) -> httpx.Response | None:
        """One request to either service, timed and counted however it ends."""
        i = self.rng.randrange(2)
        self.ledger.begin()
        t = time.monotonic()
        response, outcome = None, "ok"
        try:
            with httpx.Client(
                base_url=self.services.url(i),
                headers={"Authorization": f"Bearer {key}"},
                timeout=REQUEST_TIMEOUT_S,
            ) as http:
                response = http.request(method, path, json=body)
            outcome = error_kind(response.status_code)
        except httpx.HTTPError as e:
            outcome = error_kind(None, e)
        finally:
            self.ledger.end(Request(kind, i, t - self.t0, time.monotonic() - t, outcome))
        return response

    def retriever(self, key: str, ns: str) -> None:
        n = 0
        while not self.stop.is_set():
            q = QUESTIONS[n % len(QUESTIONS)].format(n=n % 50)
            self.request("retrieve", key, "POST", f"/v1/namespaces/{ns}/retrieve", {"question": q})
            n += 1

    def upload(self, key: str, ns: str, docs: list[dict[str, str]]) -> bool:
        r = self.request(
            "upload", key, "POST", f"/v1/namespaces/{ns}/documents", {"documents": docs}
        )
        if r is None or r.status_code != 202:
            return False
        with self.lock:
            self.jobs[str(r.json()["id"])] = (ns, docs)
        self.ledger.accept(ns, [d["id"] for d in docs])
        return True

    def uploader(self, key: str, ns: str) -> None:
        n, pending = 0, None
        while not self.stop.wait(self.upload_every):
            if pending is None:
                pending = [_document(ns, n + j) for j in range(self.docs_per_upload)]
                n += self.docs_per_upload
            elif pending:
                with self.ledger.lock:
                    self.ledger.resent += len(pending)
            if self.upload(key, ns, pending):
                pending = None

    def poller(self, key: str, ns: str) -> None:
        while not self.stop.wait(1.0):
            self.poll_once(key, ns)

    def poll_once(self, key: str, ns: str) -> None:
        with self.lock:
            mine = [j for j, (jns, _) in self.jobs.items() if jns == ns]
        for job_id in mine:
            r = self.request("poll", key, "GET", f"/v1/jobs/{job_id}")
            if r is None or r.status_code != 200:
                continue
            state = r.json().get("state")
            if state not in FINISHED:
                continue
            with self.lock:
                ns_docs = self.jobs.pop(job_id, None)
                self.done_jobs[job_id] = state
            if state != "succeeded" and ns_docs is not None:
                # A client sends a failed job's documents again (the same ids)
                with self.ledger.lock:
                    self.ledger.resent += len(ns_docs[1])
                while not self.upload(key, ns, ns_docs[1]):
                    time.sleep(1.0)

    def threads(self, namespaces: dict[str, str]) -> list[threading.Thread]:
        out = []
        for key, ns in namespaces.items():
            for fn in (self.retriever, self.uploader, self.poller):
                out.append(threading.Thread(target=fn, args=(key, ns), daemon=True))
        return out


def _document(ns: str, n: int) -> dict[str, str]:
    return {
        "id": f"{ns}-doc-{n}",
        "title": f"Town {n}",
        "text": f"River {n % 50} flows past town {n}, where mill {n % 50} grinds corn for the "
        f"farms and keeper {n % 13} tends the lighthouse of harbour {n % 50}.",
    }


# ---------------------------------------------------------------------------- the run


def _faults(
    seconds: float, services: Services, restart_neo4j: Callable[[], None] | None
) -> list[tuple[float, str, Callable[[], None]]]:
    """When each fault happens (fractions of the run): kill -9 of service 0 at a quarter and at
    three quarters (started again at once, not waited for), the Neo4j restart at half."""

    def kill_and_restart() -> None:
        # Started again at once, ready when it is: traffic meanwhile meets a refused connection
        # or its 503 while it loads, as clients of a crashed replica would
        services.kill(0)
        services.start(0, wait=False)

    out = [(0.25 * seconds, "kill -9 service 0", kill_and_restart)]
    if restart_neo4j is not None:
        out.append((0.5 * seconds, "restart Neo4j", restart_neo4j))
    out.append((0.75 * seconds, "kill -9 service 0", kill_and_restart))
    return out


def _neo4j_restarter(settings: Any) -> Callable[[], None]:
    from terag_neo4j.local import neo4j_process as local

    def restart() -> None:
        if not local.stop(settings):
            raise RuntimeError("the managed Neo4j was not running: cannot restart it")
        local.start(settings)

    return restart


def _stored(services: Services, keys: dict[str, str], namespaces: dict[str, str]) -> Any:
    from terag_bench.serve_clients import Target, listed_documents

    out: dict[str, dict[str, int]] = {}
    for key, ns in namespaces.items():
        target = Target(services.url(1), None, {"Authorization": f"Bearer {key}"})
        out[ns] = listed_documents(target, ns)
    return out


def cmd_bench_soak(args: argparse.Namespace) -> int:
    from terag_bench.runinfo import write_result
    from terag_neo4j.config import Settings

    settings = Settings()
    restart_neo4j = None
    if not args.no_neo4j_restart:
        if settings.neo4j_uri is not None:
            from terag_bench.serve_clients import BenchServeError

            raise BenchServeError(
                "bench-soak restarts the managed Neo4j: unset NEO4J_URI, or pass --no-neo4j-restart"
            )
        from terag_neo4j.local.neo4j_process import start

        start(settings)
        restart_neo4j = _neo4j_restarter(settings)
    tag = f"soak{os.getpid()}"
    keys = {f"{tag}-key{i}-{secrets.token_urlsafe(24)}": f"{tag}_k{i}" for i in range(args.keys)}
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    env.update(
        TERAG_EXTRACTOR=env.get("TERAG_EXTRACTOR", "spacy"),
        TOKENIZERS_PARALLELISM="false",
        TERAG_SERVE_HOST="127.0.0.1",
        TERAG_JOB_QUEUE=tag,
        TERAG_API_KEYS=json.dumps(
            {k: {"namespaces": [ns], "access": "write"} for k, ns in keys.items()}
        ),
    )
    log_dir = Path(tempfile.mkdtemp(prefix=f"terag-{tag}-"))
    result: dict[str, Any] = {
        "seconds": args.seconds,
        "keys": args.keys,
        "load_average_start": os.getloadavg(),
        "service_logs": str(log_dir),
    }
    services = Services(env, log_dir, args.ready_timeout)
    ledger = Ledger()
    try:
        for i in (0, 1):
            services.start(i, wait=False)  # both load their models at once
        for i in (0, 1):
            services.wait(i)
        traffic = Traffic(services, keys, ledger, args.docs_per_upload, args.upload_every)
        for key, ns in keys.items():  # each namespace has a document before retrievals start
            while not traffic.upload(key, ns, [_document(ns, -1)]):
                time.sleep(1.0)
        _settle(traffic, keys, args.settle)
        traffic.t0 = time.monotonic()
        result["rss_start_mib"] = [services.rss_mib(0), services.rss_mib(1)]
        threads = traffic.threads(keys)
        for t in threads:
            t.start()
        faults = []
        for at, what, fault in _faults(args.seconds, services, restart_neo4j):
            traffic.stop.wait(max(0.0, at - (time.monotonic() - traffic.t0)))
            began = time.monotonic() - traffic.t0
            log.info("%.0f s: %s", began, what)
            fault()
            faults.append({"at_s": round(began, 1), "what": what,
                           "took_s": round(time.monotonic() - traffic.t0 - began, 1)})  # fmt: skip
        traffic.stop.wait(max(0.0, args.seconds - (time.monotonic() - traffic.t0)))
        traffic.stop.set()
        for t in threads:
            t.join(REQUEST_TIMEOUT_S * 3)
        result["traffic_s"] = round(time.monotonic() - traffic.t0, 1)
        result["faults"] = faults
        write_result(args.out, args.name, result)  # what is measured survives a later failure
        services.wait(0)  # the last restart is up before the end's RSS
        unfinished = _settle(traffic, keys, args.settle)
        result["rss_end_mib"] = [services.rss_mib(0), services.rss_mib(1)]
        result["service_pids"] = services.pids
        try:
            stored = _stored(services, keys, keys)
        except (httpx.HTTPError, TeragError) as e:  # the traffic's numbers are still reported
            log.error("listing the soak's documents failed: %s", e)
            result["listing_error"] = f"{type(e).__name__}: {e}"
            stored = {}
        result.update(account(ledger, stored, unfinished))
    finally:
        services.stop()
        _drop(settings, keys.values())
    result["load_average_end"] = os.getloadavg()
    path = write_result(args.out, args.name, result)
    print(table(result))
    print(f"wrote {path}")
    return 0 if result.get("lost_nothing") else 1


def _settle(traffic: Traffic, keys: dict[str, str], timeout: float) -> int:
    """Poll until every job has ended (failed ones sent again); the jobs still open after."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for key, ns in keys.items():
            traffic.poll_once(key, ns)
        with traffic.lock:
            if not traffic.jobs:
                return 0
        time.sleep(1.0)
    with traffic.lock:
        return len(traffic.jobs)


def _drop(settings: Any, namespaces: Any) -> None:
    from terag_neo4j.client import TeragClient

    try:
        with TeragClient(settings) as client:
            for ns in namespaces:
                if client.store.namespaces.exists(ns):
                    client.drop(ns)
    except Exception as e:  # the numbers are what matters; leftovers are named
        log.warning("could not drop the soak's namespaces %s: %s", list(namespaces), e)


def table(result: dict[str, Any]) -> str:
    lines = [
        f"soak: {result.get('traffic_s')} s of traffic, {result['keys']} keys, two services; "
        f"faults: {', '.join(f['what'] + ' at ' + str(f['at_s']) + ' s' for f in result.get('faults', []))}",
        f"requests {result.get('requests')}, never ended {result.get('requests_never_ended')}, "
        f"errors {result.get('errors')}, p50 {result.get('p50_ms')} ms, p99 {result.get('p99_ms')} ms",
    ]
    for kind, k in (result.get("per_kind") or {}).items():
        lines.append(
            f"  {kind:>9}: {k['requests']} requests, {k['errors']} errors, "
            f"p50 {k['p50_ms']} ms, p99 {k['p99_ms']} ms"
        )
    for kind, n in (result.get("errors_by_kind") or {}).items():
        lines.append(f"  error {kind}: {n}")
    lines.append(
        f"documents accepted {result.get('documents_accepted')}, stored "
        f"{result.get('documents_stored')} (missing {result.get('documents_missing_count')}, "
        f"not once {result.get('documents_not_stored_once_count')}, resent "
        f"{result.get('documents_resent')}), jobs unfinished {result.get('jobs_unfinished')}"
    )
    lines.append(
        f"RSS MiB start {result.get('rss_start_mib')} end {result.get('rss_end_mib')} "
        f"(pids {result.get('service_pids')}); load {result['load_average_start']} -> "
        f"{result['load_average_end']}"
    )
    return "\n".join(lines)
