"""The request id's parsing, the log formatters, the audit's table of writes against the app's
routes, and the metrics' label handling, without a server."""

from __future__ import annotations

import json
import logging
import sys

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.service.app import create_app
from terag_neo4j.service.audit import WRITES
from terag_neo4j.service.metrics import Metrics, record_ingest
from terag_neo4j.service.observability import (
    REQUEST_ID,
    JsonFormatter,
    Observe,
    RequestIdFilter,
    TextFormatter,
    _flatten,
    request_id_of,
)
from terag_neo4j.service.settings import ServiceSettings

# POST routes that only read: everything else that is not a GET changes something
READ_POSTS = {"/v1/namespaces/{namespace}/retrieve", "/v1/namespaces/{namespace}/ask"}


def test_a_sane_request_id_is_kept_and_any_other_replaced() -> None:
    assert request_id_of([(b"x-request-id", b"abc-123_X.y:z")]) == "abc-123_X.y:z"
    for bad in (b"", b"a b", b"x" * 129, b'a"b', b"a\nb", "é".encode()):
        made = request_id_of([(b"x-request-id", bad)])
        assert made != bad.decode(errors="replace") and len(made) == 32
    assert request_id_of([]) != request_id_of([])


def _record(msg: str, **extra: object) -> logging.LogRecord:
    try:
        raise ValueError("boom")
    except ValueError:
        exc = sys.exc_info()
    rec = logging.LogRecord("terag_neo4j.x", logging.ERROR, __file__, 1, msg, ("a",), exc)
    for k, v in extra.items():
        setattr(rec, k, v)
    token = REQUEST_ID.set("rid-1")
    try:
        RequestIdFilter().filter(rec)
    finally:
        REQUEST_ID.reset(token)
    return rec


def test_json_lines_carry_the_request_id_fields_and_trace() -> None:
    line = JsonFormatter().format(_record("hello %s\nnext", fields={"action": "x", "key": "ab"}))
    assert "\n" not in line
    d = json.loads(line)
    assert d["message"] == "hello a\nnext" and d["request_id"] == "rid-1"
    assert d["level"] == "ERROR" and d["logger"] == "terag_neo4j.x" and d["time"].endswith("+00:00")
    assert d["action"] == "x" and d["key"] == "ab"
    assert "ValueError: boom" in d["exception"]


def test_text_lines_name_the_request() -> None:
    text = TextFormatter().format(_record("hello %s"))
    assert text.startswith("ERROR terag_neo4j.x: hello a") and "[request rid-1]" in text
    plain = logging.LogRecord("n", logging.INFO, __file__, 1, "m", None, None)
    RequestIdFilter().filter(plain)  # outside a request
    assert TextFormatter().format(plain) == "INFO n: m"


def test_the_audit_names_every_write_route_and_only_those() -> None:
    app = create_app(ServiceSettings())
    routes = {
        (m, str(getattr(r, "path", "")))
        for r in _flatten(app.router.routes)
        for m in getattr(r, "methods", None) or ()
        if str(getattr(r, "path", "")).startswith("/v1/")
    }
    assert set(WRITES) <= routes, set(WRITES) - routes
    unaudited = {(m, p) for m, p in routes if m not in ("GET", "HEAD") and (m, p) not in WRITES}
    assert {p for _, p in unaudited} <= READ_POSTS, unaudited


def test_a_refused_request_is_counted_under_the_route_it_was_for() -> None:
    app = create_app(ServiceSettings())
    observe = Observe(app, app.router.routes, None)
    scope: dict[str, object] = {
        "type": "http",
        "path": "/v1/namespaces/wiki/documents",
        "method": "POST",
    }
    assert observe._route(scope) == "/v1/namespaces/{namespace}/documents"
    assert scope["path_params"] == {"namespace": "wiki"}
    assert observe._route({"type": "http", "path": "/x", "method": "GET"}) == "unmatched"


def _samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(metrics.registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }


def test_ingest_reports_and_odd_methods_reach_the_registry() -> None:
    app = create_app(ServiceSettings())
    metrics: Metrics = app.state.metrics
    before = _samples(metrics)
    report = IngestReport("r", "ns", "spacy", "m", passages_new=3, passages_unchanged=2)
    report.input_tokens, report.output_tokens = 100, 7
    report.tokens_unknown = 2  # two extractions without counts: counted apart, never as 0
    record_ingest(report)
    metrics.http.observe("/v1/health", "BREW", 200, 0.01)
    after = _samples(metrics)

    def moved(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert moved("terag_ingest_passages_total", outcome="new") == 3
    assert moved("terag_ingest_passages_total", outcome="unchanged") == 2
    assert moved("terag_ingest_llm_tokens_total", direction="input") == 100
    assert moved("terag_ingest_llm_tokens_total", direction="output") == 7
    assert moved("terag_ingest_llm_calls_uncounted_total") == 2
    labels = {"route": "/v1/health", "method": "OTHER", "status": "200"}
    assert moved("terag_http_requests_total", **labels) == 1
    # Each app counts its own requests: a second app starts at zero
    other = create_app(ServiceSettings())
    assert not any(k[0] == "terag_http_requests_total" for k in _samples(other.state.metrics))


def test_metrics_can_be_turned_off() -> None:
    app = create_app(ServiceSettings(metrics=False))
    assert app.state.metrics is None
    assert "/metrics" not in {getattr(r, "path", None) for r in app.router.routes}
