"""Tracing (terag_neo4j/tracing.py): off, it imports nothing from opentelemetry and its hooks do
nothing but their timing; on, its spans nest across threads and a job's slices share one trace.
The spans here go to the OpenTelemetry SDK's own `InMemorySpanExporter` (the SDK's in-memory
exporter, not a collector: the end-to-end run against `terag serve` is in
tests/service/test_tracing_serve.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from terag_neo4j import tracing

ROOT = Path(__file__).resolve().parents[2]

# Imports what a retrieval and an ingest import, runs every hook, and says which opentelemetry
# modules got loaded (the MCP SDK and FastAPI import the API themselves: the service is not here)
_OFF = """
import sys, threading
from terag_neo4j import tracing
import terag_neo4j.client, terag_neo4j.store.cypher, terag_neo4j.retrieval.retriever
import terag_neo4j.indexing.pipeline, terag_neo4j.indexing.stage_overlap
timings = {}
with tracing.stage("linking", timings), tracing.span("retrieve"), tracing.statement("flat"):
    pass
with tracing.job_span("0123456789abcdef", "ingest", {}):
    pass
fn = lambda: 1
assert tracing.carry(fn) is fn and "linking" in timings and tracing.current() is None
print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))
"""


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def test_off_imports_nothing_from_opentelemetry() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _OFF], env=_clean_env(), capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_an_exporter_asked_for_turns_it_on_in_a_process() -> None:
    """The same script with OTEL_TRACES_EXPORTER=console: tracing is on (its assert fails)."""
    out = subprocess.run(
        [sys.executable, "-c", _OFF],
        env=_clean_env(OTEL_TRACES_EXPORTER="console"),
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0 and "AssertionError" in out.stderr


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, []),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ["otlp"]),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, ["otlp"]),
        ({"OTEL_TRACES_EXPORTER": "console"}, ["console"]),
        ({"OTEL_TRACES_EXPORTER": "otlp, Console"}, ["otlp", "console"]),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, []),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"}, []),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ""}, []),
    ],
)
def test_the_standard_variables_choose_the_exporters(
    env: dict[str, str], expected: list[str]
) -> None:
    assert tracing.wanted(env) == expected


def test_off_a_stage_still_times_and_an_error_leaves_no_time() -> None:
    tracing.enable(None)
    timings: dict[str, float] = {}
    with tracing.stage("walk", timings, key="pagerank"):
        pass
    with pytest.raises(ValueError), tracing.stage("final", timings):
        raise ValueError("boom")
    assert set(timings) == {"pagerank"} and timings["pagerank"] >= 0


def _child(name: str) -> None:
    with tracing.span(name):
        pass


def test_stages_nest_under_the_call_and_statements_under_the_stage(
    spans: InMemorySpanExporter,
) -> None:
    timings: dict[str, float] = {}
    with (
        tracing.span("retrieve"),
        tracing.stage("linking", timings),
        tracing.statement("link_names"),
    ):
        pass
    finished = {s.name: s for s in spans.get_finished_spans()}
    root, linking = finished["retrieve"], finished["stage linking"]
    assert linking.parent is not None and linking.parent.span_id == root.context.span_id
    statement = finished["cypher link_names"]
    assert statement.parent is not None and statement.parent.span_id == linking.context.span_id
    assert dict(statement.attributes or {}) == {
        "db.system.name": "neo4j",
        "db.query.summary": "link_names",
    }
    assert "linking" in timings


def test_carry_keeps_the_trace_on_another_thread(spans: InMemorySpanExporter) -> None:
    """Without `carry` the thread's span is a root of its own; with it, the caller's child."""
    with tracing.span("retrieve"):
        for target in (lambda: _child("bare"), tracing.carry(lambda: _child("carried"))):
            t = threading.Thread(target=target)
            t.start()
            t.join()
    finished = {s.name: s for s in spans.get_finished_spans()}
    assert finished["bare"].parent is None
    carried = finished["carried"]
    assert carried.parent is not None
    assert carried.parent.span_id == finished["retrieve"].context.span_id


def test_a_jobs_slices_share_one_trace(spans: InMemorySpanExporter) -> None:
    for _ in range(2):
        job = tracing.job_span("0123456789abcdef", "ingest", {"terag.namespace": "ns"})
        with job, tracing.stage("write"):
            pass
    with tracing.job_span("fedcba9876543210", "ingest", {}):
        pass
    jobs = [s for s in spans.get_finished_spans() if s.name == "job ingest"]
    assert len(jobs) == 3
    assert jobs[0].context.trace_id == jobs[1].context.trace_id != jobs[2].context.trace_id
    assert jobs[0].context.span_id != jobs[1].context.span_id
    assert jobs[0].attributes["terag.job_id"] == "0123456789abcdef"


def test_a_request_span_is_named_by_its_route_and_a_5xx_is_an_error(
    spans: InMemorySpanExporter,
) -> None:
    with tracing.span("POST", {"terag.request_id": "r-1"}, server=True) as sp:
        tracing.finish_request(sp, "POST", "/v1/namespaces/{namespace}/retrieve", 503)
    (span,) = spans.get_finished_spans()
    assert span.name == "POST /v1/namespaces/{namespace}/retrieve"
    assert span.attributes["http.response.status_code"] == 503
    assert span.attributes["terag.request_id"] == "r-1"
    assert span.status.status_code.name == "ERROR"
    assert span.kind.name == "SERVER"


def test_an_error_is_marked_by_its_type_not_its_message(spans: InMemorySpanExporter) -> None:
    """An exception's message may quote a question or a parameter: only its type is kept."""
    with pytest.raises(ValueError), tracing.stage("linking"), tracing.statement("match_names"):
        raise ValueError("Who designed the Beetle?")
    for s in spans.get_finished_spans():
        assert s.status.status_code.name == "ERROR" and s.status.description == "ValueError"
        assert not s.events and "Beetle" not in repr(dict(s.attributes or {}))
        assert (s.attributes or {})["error.type"] == "ValueError"


def test_a_made_up_method_is_traced_as_other(spans: InMemorySpanExporter) -> None:
    """A 12 KB method name (h11 takes up to its header limit) names no span: OTel's `_OTHER`."""
    import asyncio

    from terag_neo4j.service.observability import Observe

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        pass

    scope = {"type": "http", "method": "X" * 12_000, "path": "/v1/health", "headers": []}
    asyncio.run(Observe(app, [], None)(scope, receive, send))
    (span,) = spans.get_finished_spans()
    assert span.name == "_OTHER unmatched"
    assert span.attributes["http.request.method"] == "_OTHER"
    assert span.attributes["http.response.status_code"] == 405
