"""What an operator watches, on a real `terag serve` with JSON logs: /metrics (Prometheus text,
admin keys only) counting exactly the requests sent, by route template; X-Request-ID on every
response and on the request's log lines; one audit line per write, naming the key's id and the
documents, never the key."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from terag_neo4j.config import Settings
from terag_neo4j.service.metrics import STORE_TTL_S
from tests.service.conftest import (
    KEY_A,
    KEY_A_READ,
    KEY_ALL,
    Service,
    keys_json,
    running_service,
    service_env,
)

pytestmark = pytest.mark.integration

KEY_ADMIN = "key-admin-" + uuid.uuid4().hex
QUESTION = {"question": "Who designed the Volkswagen Beetle?", "top_k": 3}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture(scope="module")
def observed(
    base_settings: Settings, tenants: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Service, Path]]:
    """A service of its own: JSON logs to a file, and an admin key beside the suite's keys."""
    keys = json.loads(keys_json(*tenants))
    keys[KEY_ADMIN] = {"namespaces": "*", "access": "read", "admin": True}
    env = {
        **service_env(base_settings, *tenants),
        "TERAG_API_KEYS": json.dumps(keys),
        "TERAG_LOG_FORMAT": "json",
    }
    log = tmp_path_factory.mktemp("observed") / "serve.log"
    with running_service(env, base_settings, tenants, log) as svc:
        yield svc, log


def key_id(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:8]


def scrape(svc: Service) -> Samples:
    with svc.client(KEY_ADMIN) as http:
        r = http.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def log_lines(log: Path) -> list[dict[str, object]]:
    text = log.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"a log line that is not JSON: {line[:300]!r}")
    return parsed


def wait_logged(
    log: Path, pred: Callable[[dict[str, object]], bool], timeout: float = 10.0
) -> list[dict[str, object]]:
    """The log's lines once one satisfies `pred` (the server writes after answering)."""
    end = time.monotonic() + timeout
    while True:
        lines = log_lines(log)
        if any(pred(x) for x in lines) or time.monotonic() > end:
            return lines
        time.sleep(0.2)


def fresh_store_figures(svc: Service, pred: Callable[[Samples], float]) -> Samples:
    """Scrapes until `pred` holds (the Neo4j figures are re-read every STORE_TTL_S)."""
    end = time.monotonic() + STORE_TTL_S * 3
    while True:
        samples = scrape(svc)
        if pred(samples) or time.monotonic() > end:
            return samples
        time.sleep(1.0)


def test_counters_move_by_exactly_the_requests_sent(observed: tuple[Service, Path]) -> None:
    svc, _ = observed
    retrieve = "/v1/namespaces/{namespace}/retrieve"
    before = scrape(svc)
    with svc.client(KEY_A) as http:
        for _ in range(3):
            assert http.get("/v1/health").status_code == 200
        for _ in range(2):
            r = http.post(f"/v1/namespaces/{svc.ns_a}/retrieve", json=QUESTION)
            assert r.status_code == 200, r.text
        assert http.post(f"/v1/namespaces/{svc.ns_b}/retrieve", json=QUESTION).status_code == 403
    after = scrape(svc)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    requests = "terag_http_requests_total"
    assert moved(requests, route="/v1/health", method="GET", status="200") == 3
    assert moved(requests, route=retrieve, method="POST", status="200") == 2
    assert moved(requests, route=retrieve, method="POST", status="403") == 1
    count = "terag_http_request_duration_seconds_count"
    assert moved(count, route=retrieve, method="POST") == 3
    assert moved("terag_http_request_duration_seconds_sum", route=retrieve, method="POST") > 0
    # Route templates only: no namespace name becomes a label value
    routes = {dict(labels).get("route") for (name, labels) in after if name == requests}
    assert not any(svc.ns_a in str(r) or svc.ns_b in str(r) for r in routes), routes

    assert value(after, "terag_ready") == 1
    assert value(after, "terag_admission_limit") > 0
    assert "terag_admission_refused_total" in {name for name, _ in after}
    assert value(after, "process_resident_memory_bytes") > 0
    # Two retrievals on namespace A: its projection is in GDS, read through gds.graph.list
    # (cached for a few seconds: scrape until the read after the retrievals shows)
    store = fresh_store_figures(svc, lambda s: value(s, "terag_gds_projections", kind="namespace"))
    assert value(store, "terag_store_read_ok") == 1
    assert value(store, "terag_gds_projection_bytes", kind="namespace") > 0
    assert value(store, "terag_ingest_jobs", state="queued") >= 0
    assert ("terag_ingest_jobs", frozenset({("state", "succeeded")})) in store


def test_metrics_need_an_admin_key(observed: tuple[Service, Path]) -> None:
    svc, _ = observed
    for key, status in ((KEY_ALL, 403), (KEY_A_READ, 403), (None, 401), ("not-a-key-at-all", 401)):
        with svc.client(key) as http:
            r = http.get("/metrics")
        assert r.status_code == status, (key, r.text)
        assert "terag_http_requests_total" not in r.text
    with svc.client(KEY_ADMIN) as http:
        assert http.get("/metrics").status_code == 200
        # admin reads /metrics, not the namespaces: the key's scope still applies
        r = http.post(f"/v1/namespaces/{svc.ns_a}/documents", json={"documents": []})
        assert r.status_code == 403


def test_request_id_is_echoed_or_made(observed: tuple[Service, Path]) -> None:
    svc, _ = observed
    mine = "trace-" + uuid.uuid4().hex
    with svc.client(KEY_A) as http:
        assert (
            http.get("/v1/health", headers={"X-Request-ID": mine}).headers["x-request-id"] == mine
        )
        made = {http.get("/v1/health").headers["x-request-id"] for _ in range(2)}
        for bad in (b"has space", b"x" * 129, b'quote"', "ünïcode".encode()):
            got = http.get("/v1/health", headers=[(b"X-Request-ID", bad)]).headers["x-request-id"]
            assert got.encode() != bad and len(got) == 32
    assert len(made) == 2 and all(len(m) == 32 for m in made)
    # Errors carry one too: before the key check (401), and a route that does not exist (404)
    with svc.client(None) as anon:
        assert anon.get(f"/v1/namespaces/{svc.ns_a}/documents").headers.get("x-request-id")
        assert anon.get("/nowhere").headers.get("x-request-id")


def test_every_log_line_is_json_and_the_requests_carry_its_id(
    observed: tuple[Service, Path],
) -> None:
    svc, log = observed
    rid = "json-" + uuid.uuid4().hex
    with svc.client(KEY_A) as http:
        r = http.post(
            f"/v1/namespaces/{svc.ns_a}/retrieve", json=QUESTION, headers={"X-Request-ID": rid}
        )
    assert r.status_code == 200 and r.headers["x-request-id"] == rid
    lines = wait_logged(log, lambda x: x.get("request_id") == rid)
    for line in lines:
        assert {"time", "level", "logger", "message"} <= line.keys(), line
    mine = [x for x in lines if x.get("request_id") == rid]
    # uvicorn's access line for the request, through the same formatter
    assert any("/retrieve" in str(x["message"]) for x in mine), mine
    # start-up lines (no request) carry no id
    assert any("request_id" not in x and str(x["logger"]).startswith("uvicorn") for x in lines)


def test_each_write_has_one_audit_line(observed: tuple[Service, Path]) -> None:
    svc, log = observed
    ns = f"{svc.ns_a}-audit"
    docs = [{"id": f"audit-doc-{i}", "text": f"Audit document {i} about Munich."} for i in (1, 2)]
    with svc.client(KEY_ALL) as http:
        assert http.post("/v1/namespaces", json={"name": ns}).status_code == 201
        r = http.post(f"/v1/namespaces/{ns}/documents", json={"documents": docs})
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        for _ in range(600):
            job = http.get(f"/v1/jobs/{job_id}").json()
            if job["state"] not in ("queued", "running"):
                break
            time.sleep(0.2)
        assert job["state"] == "succeeded", job
        assert http.delete(f"/v1/jobs/{job_id}").status_code == 202
        assert http.delete(f"/v1/namespaces/{ns}/documents/audit-doc-1").status_code == 200
        assert http.delete(f"/v1/namespaces/{ns}").status_code == 204
    with svc.client(KEY_A_READ) as http:  # a refused write is audited too
        r = http.post(f"/v1/namespaces/{svc.ns_a}/documents", json={"documents": docs[:1]})
        assert r.status_code == 403

    reader = key_id(KEY_A_READ)
    lines = wait_logged(log, lambda x: x.get("event") == "write" and x.get("key") == reader)
    audit = [x for x in lines if x["logger"] == "terag_neo4j.audit"]
    by_action = {(x["action"], x["key"]): x for x in audit if x["namespace"] in (ns, svc.ns_a)}
    everyone = key_id(KEY_ALL)
    created = by_action[("namespace.create", everyone)]
    assert created["namespace"] == ns and created["status"] == 201 and created["outcome"] == "ok"
    added = by_action[("documents.add", everyone)]
    assert added["documents"] == ["audit-doc-1", "audit-doc-2"] and added["status"] == 202
    assert added["request_id"] and added["time"]
    cancelled = by_action[("job.cancel", everyone)]
    assert cancelled["namespace"] == ns and cancelled["job"] == job_id
    deleted = by_action[("documents.delete", everyone)]
    assert deleted["documents"] == ["audit-doc-1"] and deleted["status"] == 200
    assert by_action[("namespace.drop", everyone)]["status"] == 204
    refused = by_action[("documents.add", reader)]
    assert refused["namespace"] == svc.ns_a and refused["outcome"] == "refused"
    assert refused["documents"] == []  # refused before its body was read
    # Five writes, five lines (the job polls are reads); no line of the log holds a key
    assert len([x for x in audit if x["namespace"] == ns]) == 5
    text = log.read_text(encoding="utf-8")
    for key in (KEY_ALL, KEY_A, KEY_A_READ, KEY_ADMIN):
        assert key not in text

    # The job is counted among the database's (shared with other tests: at least this one)
    store = fresh_store_figures(svc, lambda s: value(s, "terag_ingest_jobs", state="succeeded"))
    assert value(store, "terag_ingest_jobs", state="succeeded") >= 1
    assert ("terag_ingest_passages_total", frozenset({("outcome", "new")})) in store
