"""`/metrics` in the Prometheus text format: HTTP requests and latency by route template, the
admission queue, ingest jobs, passages and tokens ingested, GDS projections and the process.

Each app has its own `CollectorRegistry` (several apps may live in one process, as in tests).
Request counts are pushed by the `Observe` middleware, and the ingest worker reports what each
group of documents wrote through `record_ingest`; the rest is read when scraped (the runtime's
admission; the jobs and GDS catalogue in Neo4j, two short reads cached for `STORE_TTL_S`, so
scraping stays cheap).

The neo4j driver exposes no pool statistics, so there is no pool metric: the admission gauges
(calls running or waiting for a worker thread) bound the retrieval calls that hold a session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from starlette.requests import Request
from starlette.responses import Response

from terag_neo4j.service.auth import authenticate
from terag_neo4j.service.http_errors import ServiceError, error_response

if TYPE_CHECKING:
    from starlette.datastructures import State

    from terag_neo4j.indexing.report import IngestReport

log = logging.getLogger(__name__)

# Seconds: a health check takes a millisecond, a retrieval tens to hundreds, an answer seconds
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# Methods outside these are one label value, so a caller cannot mint label values
METHODS = frozenset({"GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"})
JOB_STATES = ("queued", "running", "succeeded", "failed", "cancelled")
STORE_TTL_S = 10.0
STORE_WAIT_S = 2.0


class HttpMetrics:
    """Requests by (route template, method, status) and latency by (route template, method).

    The label children are looked up once per combination and kept, so a request costs one
    dict lookup, an increment and an observation."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "terag_http_requests",
            "HTTP requests answered, by route template, method and status",
            ["route", "method", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "terag_http_request_duration_seconds",
            "HTTP request time until the response (a streamed one: its end), by route template",
            ["route", "method"],
            buckets=BUCKETS,
            registry=registry,
        )
        self.in_flight = Gauge(
            "terag_http_requests_in_flight", "HTTP requests being answered now", registry=registry
        )
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        # Keyed by the label, never by what the caller sent: a made-up method of 16 KiB per
        # request added an entry each (5,000 grew the process by 54 MB, for good)
        m = method if method in METHODS else "OTHER"
        key = (route, m, status)
        child = self._children.get(key)
        if child is None:
            child = (self.requests.labels(route, m, str(status)), self.latency.labels(route, m))
            self._children[key] = child
        child[0].inc()
        child[1].observe(seconds)


class _IngestTotals:
    """What this process's ingest worker wrote, summed over its groups of documents."""

    FIELDS = ("passages_new", "passages_replaced", "passages_unchanged")
    # Extractions whose server sent no token counts: the token counters leave them out
    UNCOUNTED = "tokens_unknown"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.passages = dict.fromkeys((*self.FIELDS, self.UNCOUNTED), 0)
        self.tokens = {"input": 0, "output": 0}

    def add(self, report: Any) -> None:
        with self._lock:
            for f in self.passages:
                self.passages[f] += int(getattr(report, f, 0) or 0)
            for d in self.tokens:
                self.tokens[d] += int(getattr(report, f"{d}_tokens", 0) or 0)

    def snapshot(self) -> tuple[dict[str, int], dict[str, int]]:
        with self._lock:
            return dict(self.passages), dict(self.tokens)


# One per process: the worker that ingests is the process's, whichever app serves /metrics
_INGEST = _IngestTotals()


def record_ingest(report: IngestReport) -> None:
    """Count what one indexing call of the ingest worker wrote (its passages new, replaced and
    unchanged, and the LLM tokens it spent)."""
    _INGEST.add(report)


def _num(obj: Any, name: str) -> float | None:
    v = getattr(obj, name, None)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


class RuntimeCollector:
    """Readiness, admission and what this process ingested, read when scraped."""

    def __init__(self, state: State) -> None:
        self.state = state

    def collect(self) -> Iterator[Metric]:
        runtime = getattr(self.state, "runtime", None)
        ready = 1.0 if getattr(runtime, "warm", False) else 0.0
        yield GaugeMetricFamily("terag_ready", "1 once models are loaded", value=ready)
        yield from self._admission(getattr(runtime, "admission", None))
        passages, tokens = _INGEST.snapshot()
        c = CounterMetricFamily(
            "terag_ingest_passages",
            "passages this process's ingest worker indexed, by outcome",
            labels=["outcome"],
        )
        uncounted = passages.pop(_IngestTotals.UNCOUNTED)
        for field, n in passages.items():
            c.add_metric([field.removeprefix("passages_")], n)
        yield c
        yield CounterMetricFamily(
            "terag_ingest_llm_calls_uncounted",
            "extractions whose LLM server sent no token counts (left out of the tokens)",
            value=uncounted,
        )
        t = CounterMetricFamily(
            "terag_ingest_llm_tokens",
            "LLM tokens the extraction of those passages spent, input and output",
            labels=["direction"],
        )
        for direction, n in tokens.items():
            t.add_metric([direction], n)
        yield t

    @staticmethod
    def _admission(adm: Any) -> Iterator[Metric]:
        if adm is None:
            return
        gauges = (
            ("pending", "terag_admission_requests", "calls running or waiting for a worker"),
            ("limit", "terag_admission_limit", "calls running or waiting beyond which: 429"),
            ("running", "terag_admission_workers", "worker threads for retrieval calls"),
            ("share_limit", "terag_admission_key_limit", "calls one key may have in admission"),
        )
        for attr, name, doc in gauges:
            v = _num(adm, attr)
            if v is not None:
                yield GaugeMetricFamily(name, doc, value=v)
        refused = _num(adm, "refused")
        if refused is not None:
            yield CounterMetricFamily(
                "terag_admission_refused", "calls refused for load (429 or 503)", value=refused
            )


class StoreCollector:
    """The database's ingest jobs by state and the project's GDS projections (a namespace's,
    and temporary per-query ones) with their memory: two short reads, at most every
    `STORE_TTL_S` seconds, off the event loop."""

    def __init__(self, state: State) -> None:
        self.state = state
        self._gds: list[dict[str, Any]] | None = None
        self._jobs: dict[str, int] | None = None
        self._at = 0.0
        self._ok = False
        self._reading: asyncio.Future[None] | None = None

    def _read(self, client: Any) -> None:
        from terag_neo4j.store.gds import catalog

        try:
            self._gds = catalog(client.store)
            rows = client.store.read("metrics_jobs")
            self._jobs = {str(r["state"]): int(r["jobs"]) for r in rows}
            self._ok = True
        except Exception as e:  # Neo4j away: the last figures stay, marked stale
            log.warning("metrics: Neo4j unreadable: %s", e)
            self._ok = False
        self._at = time.monotonic()

    async def refresh(self) -> None:
        runtime = getattr(self.state, "runtime", None)
        if runtime is None or not getattr(runtime, "warm", False):
            return
        if time.monotonic() - self._at < STORE_TTL_S:
            return
        if self._reading is None or self._reading.done():
            client = runtime.client
            self._reading = asyncio.get_running_loop().run_in_executor(None, self._read, client)
        # A slow read does not hold the scrape: it answers with the last figures
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._reading), STORE_WAIT_S)

    def collect(self) -> Iterator[Metric]:
        ok = 1.0 if self._ok else 0.0
        yield GaugeMetricFamily(
            "terag_store_read_ok", "1 when the last read of jobs and GDS graphs succeeded", value=ok
        )
        if self._jobs is not None:
            g = GaugeMetricFamily(
                "terag_ingest_jobs", "the database's ingest jobs, by state", labels=["state"]
            )
            for state in sorted(set(JOB_STATES) | set(self._jobs)):
                g.add_metric([state], self._jobs.get(state, 0))
            yield g
        if self._gds is None:
            return
        count = {"namespace": 0, "temporary": 0}
        size = {"namespace": 0, "temporary": 0}
        for r in self._gds:
            # "terag__" starts the per-query graphs; a namespace's is "terag_<namespace>_..."
            kind = "temporary" if str(r.get("graphName", "")).startswith("terag__") else "namespace"
            count[kind] += 1
            size[kind] += int(r.get("sizeInBytes") or 0)
        n = GaugeMetricFamily("terag_gds_projections", "GDS graphs in memory", labels=["kind"])
        b = GaugeMetricFamily(
            "terag_gds_projection_bytes", "GDS graphs' memory (bytes)", labels=["kind"]
        )
        for kind in count:
            n.add_metric([kind], count[kind])
            b.add_metric([kind], size[kind])
        yield n
        yield b


class Metrics:
    """One app's registry, its HTTP metrics and its scrape-time collectors."""

    def __init__(self, state: State) -> None:
        self.registry = CollectorRegistry()
        self.http = HttpMetrics(self.registry)
        self.store = StoreCollector(state)
        self.registry.register(RuntimeCollector(state))
        self.registry.register(self.store)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)

    async def endpoint(self, request: Request) -> Response:
        """`GET /metrics`: for a key with `"admin": true` (or anyone on a keyless loopback
        service); 401 without a valid key, 403 for a key without admin."""
        try:
            principal = authenticate(request.app.state.keys, request.headers)
        except ServiceError as e:
            return error_response(e.status, e.type, e.message, e.headers)
        if not principal.admin:
            return error_response(403, "Forbidden", '/metrics needs a key with "admin": true')
        await self.store.refresh()
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)
