"""OpenTelemetry traces, when the standard OTEL_* variables ask for an exporter and the `otel`
extra is installed; the one module that imports `opentelemetry`. Otherwise it imports none of it
and every hook returns at its first test (docs/operations.md, "Read a trace"). Spans carry names,
counts, statuses and ids: never a parameter's value, a key, a question or a document (a caller
adds the question only where TERAG_TRACE_CONTENT says so)."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

log = logging.getLogger(__name__)

SERVICE_NAME = "terag"
EXPORTERS = ("otlp", "console")
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_NOOP: contextlib.nullcontext[None] = contextlib.nullcontext()

F = TypeVar("F", bound=Callable[..., Any])

_tracer: Tracer | None = None
_resolved = False
_lock = threading.Lock()


def wanted(env: Mapping[str, str] = os.environ) -> list[str]:
    """The exporters the standard variables ask for, in order; [] means tracing is off."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    named = [n.strip().lower() for n in env.get("OTEL_TRACES_EXPORTER", "").split(",")]
    if any(named):
        return [n for n in named if n and n != "none"]
    return ["otlp"] if any(env.get(v) for v in _ENDPOINTS) else []


def _build(names: list[str]) -> TracerProvider | None:
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        log.warning("OTEL_* asks for traces, but the otel extra is not installed: none are sent")
        return None
    name = os.environ.get("OTEL_SERVICE_NAME") or SERVICE_NAME
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    for n in names:
        if n == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        elif n == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter(out=sys.stdout)))
        else:
            log.warning("OTEL_TRACES_EXPORTER=%s: not one of %s; skipped", n, ", ".join(EXPORTERS))
    # Batched spans are sent at exit. Not the global provider: through it FastAPI and the MCP
    # SDK would add a second server span to each request (without its id), and many more
    atexit.register(provider.shutdown)
    return provider


def _on() -> Tracer | None:
    global _resolved, _tracer
    if not _resolved:
        with _lock:
            if not _resolved:
                names = wanted()
                provider = _build(names) if names else None
                _tracer = provider.get_tracer("terag_neo4j") if provider is not None else None
                _resolved = True
    return _tracer


def enable(provider: TracerProvider | None) -> None:
    """Trace to `provider` (an application's own, or a test's in-memory exporter), whatever the
    variables say; None turns tracing off."""
    global _resolved, _tracer
    with _lock:
        _tracer = provider.get_tracer("terag_neo4j") if provider is not None else None
        _resolved = True


class _Traced:
    """A span as the current one. An error marks it with its type alone: an exception's message
    or trace may quote a question, a document or a Neo4j parameter, so neither is recorded."""

    __slots__ = ("_cm", "_span")

    def __init__(self, tracer: Tracer, name: str, **kw: Any) -> None:
        self._cm = tracer.start_as_current_span(
            name, record_exception=False, set_status_on_exception=False, **kw
        )

    def __enter__(self) -> Span:
        self._span = self._cm.__enter__()
        return self._span

    def __exit__(self, *exc: Any) -> bool | None:
        if exc[0] is not None:
            from opentelemetry.trace import Status, StatusCode

            self._span.set_status(Status(StatusCode.ERROR, exc[0].__name__))
            self._span.set_attribute("error.type", exc[0].__qualname__)
        return self._cm.__exit__(*exc)


def span(name: str, attributes: Mapping[str, Any] | None = None, **kw: Any) -> Any:
    """A context manager: a child span of the current one (a root where there is none; `server`
    makes it a request's), an error marked by its type; the null context when tracing is off."""
    tracer = _tracer if _resolved else _on()
    if tracer is None:
        return _NOOP
    if kw.pop("server", False):
        from opentelemetry.trace import SpanKind

        kw["kind"] = SpanKind.SERVER
    return _Traced(tracer, name, attributes=attributes, **kw)


def statement(name: str) -> Any:
    """`span` of a Neo4j statement: `cypher <name>`, by its file's name alone."""
    if (_tracer if _resolved else _on()) is None:
        return _NOOP
    return span(f"cypher {name}", {"db.system.name": "neo4j", "db.query.summary": name})


def job_span(job_id: str, kind: str, attributes: Mapping[str, Any]) -> Any:
    """`span` of one slice of an ingest or import job, in the job's own trace: its trace id is
    drawn from the job's id, so every slice (a resume after a crash, another process's turn)
    joins the one trace, under a parent that stands for the job."""
    if _on() is None:
        return _NOOP
    from opentelemetry import trace

    digest = hashlib.sha256(job_id.encode()).digest()
    parent = trace.SpanContext(
        int.from_bytes(digest[:16]), int.from_bytes(digest[16:24]), is_remote=True,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )  # fmt: skip
    ctx = trace.set_span_in_context(trace.NonRecordingSpan(parent))
    return span(f"job {kind}", {"terag.job_id": job_id, **attributes}, context=ctx)


def finish_request(sp: Span | None, method: str, route: str, status: int) -> None:
    """Name a request's span by its route template once routing chose one, with its status."""
    if sp is None:
        return
    sp.update_name(f"{method} {route}")
    sp.set_attributes({"http.route": route, "http.response.status_code": status})
    if status >= 500:
        from opentelemetry.trace import Status, StatusCode

        sp.set_status(Status(StatusCode.ERROR))


def question(namespace: str, mode: str | None, text: str, with_text: bool) -> dict[str, str]:
    """A question's span attributes: its text only where TERAG_TRACE_CONTENT allows."""
    attributes = {"terag.namespace": namespace}
    if mode:
        attributes["terag.mode"] = mode
    if with_text:
        attributes["terag.question"] = text
    return attributes


def annotate(attributes: Mapping[str, Any]) -> None:
    """Attributes on the current span (nothing when tracing is off)."""
    if _on() is not None:
        from opentelemetry import trace

        trace.get_current_span().set_attributes(attributes)


class stage:  # lower case: used as a `with` statement, like contextlib's
    """A stage of a retrieval or an ingest: its seconds into `timings[key or name]` when it
    ends without an error (where `timings` is given), and a span `stage <name>` when tracing."""

    __slots__ = ("_cm", "_name", "_start", "_timings")

    def __init__(
        self, name: str, timings: dict[str, float] | None = None, key: str | None = None
    ) -> None:
        self._name = key or name
        self._timings = timings
        self._cm = _NOOP if (_tracer if _resolved else _on()) is None else span(f"stage {name}")
        self._start = 0.0

    def __enter__(self) -> None:
        self._cm.__enter__()
        self._start = time.perf_counter()

    def __exit__(self, *exc: Any) -> bool | None:
        if self._timings is not None and exc[0] is None:
            self._timings[self._name] = time.perf_counter() - self._start
        return self._cm.__exit__(*exc)


def current() -> object | None:
    """The current trace context, for `carry` to a thread started further in; None when off."""
    if _on() is None:
        return None
    from opentelemetry import context

    return context.get_current()


def carry(fn: F, within: object | None = None) -> F:
    """`fn` to run on another thread within the current trace (or the context `within`, from
    `current`): a request's retrieval, a question's vector, an ingest's batches; `fn` itself
    when tracing is off."""
    if _on() is None:
        return fn
    from opentelemetry import context

    ctx = within if within is not None else context.get_current()

    def inside(*args: Any, **kwargs: Any) -> Any:
        token = context.attach(ctx)  # type: ignore[arg-type]
        try:
            return fn(*args, **kwargs)
        finally:
            context.detach(token)

    return inside  # type: ignore[return-value]
