"""The moving parts of `terag bench-serve`: a `terag serve` process on a free loopback port, N
HTTP clients on threads (each its own connection pool, as separate programs would be), and the
uploads that the mixed and soak runs make through the documents route."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from terag_bench.runinfo import process_rss_mib
from terag_bench.scoring import percentile_ms
from terag_neo4j.errors import TeragError
from terag_neo4j.service.paths import job_path, namespace_path

log = logging.getLogger(__name__)
MAX_CLIENTS = 64


class BenchServeError(TeragError, ValueError):
    """A bench-serve run that cannot go on (service not ready, not loopback, no namespace)."""


@dataclass
class Target:
    """The service under test: its URL, its process id when known (for RSS), its key."""

    url: str
    pid: int | None
    headers: dict[str, str] = field(default_factory=dict)

    def rss_mib(self) -> float | None:
        mib = process_rss_mib(self.pid).get("VmRSS") if self.pid else None
        return round(mib, 1) if mib is not None else None

    def http(self, timeout: float = 120.0) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=timeout)


def ns_path(namespace: str, tail: str = "") -> str:
    return namespace_path(namespace, tail)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def check_loopback(url: str) -> None:
    from terag_neo4j.service.settings import is_loopback

    host = urlsplit(url).hostname or ""
    if not is_loopback(host):
        raise BenchServeError(f"bench-serve loads loopback services only, not {host or url!r}")


def wait_ready(url: str, proc: subprocess.Popen[bytes] | None, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise BenchServeError(f"terag serve exited with {proc.returncode} before it was ready")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/v1/ready", timeout=10).status_code == 200:
                return
        time.sleep(0.5)
    raise BenchServeError(f"the service at {url} was not ready within {timeout:.0f} s")


@contextlib.contextmanager
def running_service(
    url: str | None,
    pid: int | None,
    api_key: str | None,
    log_path: Path,
    ready_s: float,
    tree: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> Iterator[Target]:
    """The service at `url`, or a `terag serve` of our own on a free loopback port: this
    checkout's, or the one in `tree` (another commit's, on the same virtual environment)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    if url:
        check_loopback(url)
        wait_ready(url, None, ready_s)
        yield Target(url.rstrip("/"), pid, headers)
        return
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    env.setdefault("TERAG_EXTRACTOR", "spacy")  # uploads are indexed by spaCy, not an LLM
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env["TERAG_SERVE_HOST"] = "127.0.0.1"
    env.update(extra_env or {})
    if tree is not None:  # `-m` puts the working folder first on the path
        env["PYTHONPATH"] = str(tree)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "terag_neo4j.cli", "serve", "--port", str(port)],
            cwd=tree,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            log.info("started terag serve (pid %d) on %s; log %s", proc.pid, url, log_path)
            wait_ready(url, proc, ready_s)
            yield Target(url, proc.pid, headers)
        finally:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@dataclass
class Call:
    """One request: when it started (seconds into the run), how long it took, what came back."""

    namespace: str
    question: str
    start: float
    seconds: float
    passages: list[tuple[str, str, str]] | None  # (id, doc_id, text) of a 200 answer
    error: str | None


def _ask(http: httpx.Client, ns: str, q: str, top_k: int) -> tuple[list[Any] | None, str | None]:
    try:
        r = http.post(ns_path(ns, "/retrieve"), json={"question": q, "top_k": top_k})
        if r.status_code != 200:
            return None, f"{r.status_code}: {r.text[:200]}"
        return [(p["id"], p["doc_id"], p["text"]) for p in r.json()["passages"]], None
    except (httpx.HTTPError, ValueError, KeyError) as e:  # counted, not raised
        return None, f"{type(e).__name__}: {e}"


def run_clients(
    target: Target,
    namespaces: Sequence[str],
    questions: Sequence[str],
    clients: int,
    seconds: float,
    top_k: int = 5,
    on_start: Callable[[float], None] | None = None,
) -> tuple[list[Call], float]:
    """`clients` threads asking in turn for `seconds`; thread i asks `namespaces[i % len]`.

    Every thread sends one unmeasured request first, then all start together. `on_start(t0)` runs
    on the calling thread once they have (the mixed and soak runs upload from there). Returns
    the calls and the measured wall time."""
    if not 1 <= clients <= MAX_CLIENTS:
        raise BenchServeError(f"clients: 1 to {MAX_CLIENTS}, got {clients}")
    ready = threading.Barrier(clients + 1)
    go = threading.Event()
    clock: dict[str, float] = {}
    calls: list[list[Call]] = [[] for _ in range(clients)]

    def loop(i: int) -> None:
        ns = namespaces[i % len(namespaces)]
        with target.http() as http:
            _ask(http, ns, questions[i % len(questions)], top_k)
            ready.wait()
            go.wait()
            t0, end = clock["t0"], clock["end"]
            k = i * 7  # clients start at different questions, as separate users would
            while time.perf_counter() < end:
                q = questions[k % len(questions)]
                t = time.perf_counter()
                passages, err = _ask(http, ns, q, top_k)
                calls[i].append(Call(ns, q, t - t0, time.perf_counter() - t, passages, err))
                k += 1

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    ready.wait()  # all warmed up: the clock starts now
    clock["t0"] = t0 = time.perf_counter()
    clock["end"] = t0 + seconds
    go.set()
    if on_start is not None:
        on_start(t0)
    for t in threads:
        t.join()
    return [c for cs in calls for c in cs], time.perf_counter() - t0


def summarize(calls: Sequence[Call], wall_s: float) -> dict[str, Any]:
    lat = [c.seconds for c in calls]
    errors = [c.error for c in calls if c.error]
    return {
        "queries": len(calls),
        "wall_s": round(wall_s, 2),
        "queries_per_s": round(len(calls) / wall_s, 2) if wall_s > 0 else 0.0,
        "p50_ms": percentile_ms(lat, 50),
        "p95_ms": percentile_ms(lat, 95),
        "p99_ms": percentile_ms(lat, 99),
        "max_ms": percentile_ms(lat, 100),
        "error_count": len(errors),
        "errors": sorted(set(errors))[:10],
    }


def upload(target: Target, namespace: str, docs: Sequence[dict[str, str]]) -> str:
    """Add documents through the documents route; the job's id."""
    with target.http() as http:
        r = http.post(ns_path(namespace, "/documents"), json={"documents": list(docs)})
        if r.status_code != 202:
            raise BenchServeError(f"upload refused: {r.status_code} {r.text[:300]}")
        return str(r.json()["id"])


def wait_jobs(target: Target, job_ids: Sequence[str], timeout: float) -> list[dict[str, Any]]:
    end = time.monotonic() + timeout
    out: list[dict[str, Any]] = []
    with target.http() as http:
        for job_id in job_ids:
            while True:
                job = http.get(job_path(job_id)).json()
                if job.get("state") in ("succeeded", "failed", "cancelled"):
                    break
                if time.monotonic() > end:
                    break
                time.sleep(0.5)
            out.append(job)
    return out


def listed_documents(target: Target, namespace: str) -> dict[str, int]:
    """Every document of the namespace with its passage count, page by page."""
    found: dict[str, int] = {}
    with target.http() as http:
        offset = 0
        while True:
            params: dict[str, int] = {"offset": offset, "limit": 1000}
            r = http.get(ns_path(namespace, "/documents"), params=params)
            if r.status_code != 200:
                raise BenchServeError(f"listing {namespace}: {r.status_code} {r.text[:300]}")
            page = r.json()
            found.update({d["id"]: int(d["passages"]) for d in page["documents"]})
            offset += len(page["documents"])
            if not page["documents"] or offset >= page["total"]:
                return found


def ensure_namespace(target: Target, namespace: str, create: bool) -> dict[str, Any]:
    with target.http() as http:
        if create:
            r = http.post("/v1/namespaces", json={"name": namespace})
        else:
            r = http.get(ns_path(namespace))
        if r.status_code == 404:
            raise BenchServeError(
                f"namespace {namespace!r} does not exist on {target.url}: build it first "
                "(`terag bench-index DATASET`), or name another with --namespace"
            )
        if r.status_code >= 400:
            raise BenchServeError(f"namespace {namespace!r}: {r.status_code} {r.text[:300]}")
        data: dict[str, Any] = r.json()
        return data


def drop_namespace(target: Target, namespace: str) -> None:
    with target.http() as http:
        r = http.delete(ns_path(namespace))
        if r.status_code not in (204, 404):
            log.warning("could not drop %s: %s %s", namespace, r.status_code, r.text[:200])
