"""End to end: a real `terag serve` with the otel extra and `OTEL_TRACES_EXPORTER=console` (the
SDK's own console exporter, to the process's standard output) traces an HTTP retrieval and an
MCP search, each as one trace under a server span named by its route, with the request id, every
retrieval stage and every Neo4j statement, and no key and no question text anywhere. This is the
command docs/operations.md ("Read a trace") gives."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from terag_neo4j.config import Settings
from tests.service.conftest import KEY_A, KEY_ALL, Service, running_service, service_env
from tests.service.test_http import wait_job
from tests.service.test_mcp import http_session

pytestmark = pytest.mark.integration

QUESTION = "Which engineer designed the car built in Puebla until 2003?"
MCP_QUESTION = "Where are the headquarters of the maker of the Beetle?"
STAGES = {"projection", "linking", "flat", "flat text", "flat vector", "embedding", "restart"}
WALKED = {"walk", "final"}


@pytest.fixture(scope="module")
def traced(
    base_settings: Settings, tenants: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Service, Path]]:
    env = service_env(base_settings, *tenants)
    env = {k: v for k, v in env.items() if not k.startswith("OTEL_")}
    # the batch processor sends every 100 ms, not every 5 s
    env.update(OTEL_TRACES_EXPORTER="console", OTEL_BSP_SCHEDULE_DELAY="100")
    folder = tmp_path_factory.mktemp("traced")
    spans = folder / "spans.json"
    with running_service(env, base_settings, tenants, folder / "serve.log", stdout=spans) as svc:
        yield svc, spans


def read_spans(path: Path) -> list[dict[str, Any]]:
    """The console exporter's output: one indented JSON object per span, one after another."""
    text, out, pos = path.read_text(encoding="utf-8"), [], 0
    decoder = json.JSONDecoder()
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        span, pos = decoder.raw_decode(text, pos)
        out.append(span)


def span_reads(path: Path, timeout_s: float = 60) -> Iterator[list[dict[str, Any]]]:
    """The span file, read again every 0.2 s for up to `timeout_s`: spans are exported in a batch
    after their response, so a caller stops when what it waits for is in."""
    end = time.monotonic() + timeout_s
    while True:
        yield read_spans(path)
        if time.monotonic() > end:
            return
        time.sleep(0.2)


def trace_of(path: Path, request_id: str, want: set[str]) -> list[dict[str, Any]]:
    """The spans of the trace whose server span carries `request_id`, once `want` are in."""
    spans: list[dict[str, Any]] = []
    for spans in span_reads(path):
        roots = [s for s in spans if s["attributes"].get("terag.request_id") == request_id]
        if roots:
            trace = roots[0]["context"]["trace_id"]
            found = [s for s in spans if s["context"]["trace_id"] == trace]
            if want <= {s["name"] for s in found}:
                return found
    names = sorted({s["name"] for s in spans})
    raise AssertionError(f"no trace of {request_id} with {want} in {names}")


def check_trace(spans: list[dict[str, Any]], route: str, request_id: str) -> set[str]:
    """The server span is the one root; every other span hangs under it; the names of the
    statements that ran."""
    by_id = {s["context"]["span_id"]: s for s in spans}
    (root,) = [s for s in spans if s["parent_id"] is None]
    assert root["name"] == f"POST {route}" and root["kind"] == "SpanKind.SERVER"
    assert root["attributes"]["terag.request_id"] == request_id
    assert root["attributes"]["http.route"] == route
    assert root["attributes"]["http.response.status_code"] == 200
    assert root["resource"]["attributes"]["service.name"] == "terag"
    for s in spans:
        up = s
        while up["parent_id"] is not None:
            up = by_id[up["parent_id"]]  # a parent outside the trace would raise here
        assert up is root
    return {s["name"].removeprefix("cypher ") for s in spans if s["name"].startswith("cypher ")}


def test_an_http_retrieval_is_one_trace_with_every_stage_and_statement(
    traced: tuple[Service, Path],
) -> None:
    svc, path = traced
    rid = "trace-http-1"
    with svc.client(KEY_A) as http:
        r = http.post(
            f"/v1/namespaces/{svc.ns_a}/retrieve",
            json={"question": QUESTION},
            headers={"X-Request-ID": rid},
        )
    assert r.status_code == 200, r.text
    timings = set(r.json()["timings"])
    want = {f"stage {s}" for s in STAGES} | {"retrieve"}
    spans = trace_of(path, rid, want)
    statements = check_trace(spans, "/v1/namespaces/{namespace}/retrieve", rid)
    names = {s["name"] for s in spans}
    # every stage the answer's timings name has its span (the walk's timing is `pagerank`)
    assert {"stage " + ("walk" if t == "pagerank" else t) for t in timings} <= names
    if "pagerank" in timings:
        assert {f"stage {s}" for s in WALKED} <= names
    assert {"namespace_version", "flat_text", "flat_vector"} <= statements
    assert len(statements) >= 5, statements


@pytest.mark.asyncio
async def test_an_mcp_search_is_one_trace_under_its_request(traced: tuple[Service, Path]) -> None:
    svc, path = traced
    async with http_session(svc, KEY_A) as s:
        found = await s.call_tool("search", {"namespace": svc.ns_a, "question": MCP_QUESTION})
    assert not found.is_error
    # The tools/call POST's spans are exported in the batch after its response: wait for them
    for spans in span_reads(path, 30):
        mcp = [s for s in spans if s["attributes"].get("http.route") == "/mcp"]
        # the POST whose trace holds the retrieval: the tools/call one
        by_trace = {s["attributes"]["terag.request_id"]: s["context"]["trace_id"] for s in mcp}
        with_retrieval = [
            rid
            for rid, trace in by_trace.items()
            if any(x["name"] == "retrieve" and x["context"]["trace_id"] == trace for x in spans)
        ]
        if with_retrieval:
            break
    assert len(with_retrieval) == 1, by_trace
    rid = with_retrieval[0]
    spans = trace_of(path, rid, {"retrieve", "stage flat"})
    statements = check_trace(spans, "/mcp", rid)
    assert {"flat_text", "flat_vector"} <= statements


def test_no_key_and_no_question_in_any_span(traced: tuple[Service, Path]) -> None:
    svc, path = traced
    with svc.client(KEY_A) as http:
        assert http.post(
            f"/v1/namespaces/{svc.ns_a}/retrieve", json={"question": QUESTION}
        ).is_success
    time.sleep(0.5)  # a batch or more
    text = path.read_text(encoding="utf-8")
    assert '"name": "retrieve"' in text
    for secret in (KEY_A, KEY_ALL, QUESTION, MCP_QUESTION, "Puebla", "headquarters"):
        assert secret not in text, secret


def test_an_ingest_job_is_one_trace_of_its_stages_and_statements(
    traced: tuple[Service, Path],
) -> None:
    svc, path = traced
    name = f"svc-{uuid.uuid4().hex[:8]}-t"
    text = "Franz Kafka wrote The Trial in Prague, the capital of Bohemia."
    docs = [{"id": "kafka", "title": "Kafka", "text": text}]
    with svc.client(KEY_ALL) as http:
        r = http.post(f"/v1/namespaces/{name}/documents", json={"documents": docs})
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        assert wait_job(http, job_id)["state"] == "succeeded"
        try:
            want = {"job ingest", "index"} | {
                f"stage {s}" for s in ("chunking", "extraction", "embedding", "write")
            }
            for spans in span_reads(path):
                jobs = [s for s in spans if s["attributes"].get("terag.job_id") == job_id]
                trace = jobs[0]["context"]["trace_id"] if jobs else None
                found = [s for s in spans if s["context"]["trace_id"] == trace]
                if want <= {s["name"] for s in found}:
                    break
            assert want <= {s["name"] for s in found}, sorted({s["name"] for s in found})
            by_id = {s["context"]["span_id"]: s for s in found}
            (job,) = jobs
            for s in found:  # all under the job's span (its parent stands for the job)
                up = s
                while up is not job:
                    up = by_id[up["parent_id"]]
            assert any(s["name"].startswith("cypher ") for s in found)
            assert "Kafka wrote" not in path.read_text(encoding="utf-8")
        finally:
            http.delete(f"/v1/namespaces/{name}")
