"""The HTTP API end to end: a real `terag serve` process, real Neo4j + GDS, a real HTTP client."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest

from terag_neo4j.client import TeragClient
from tests.service.conftest import KEY_ALL, Service

pytestmark = pytest.mark.integration

QUESTION = "Who designed the Volkswagen Beetle?"


def wait_job(http: httpx.Client, job_id: str, timeout: float = 180) -> dict[str, object]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        job = http.get(f"/v1/jobs/{job_id}").json()
        if job["state"] in ("succeeded", "failed", "cancelled"):
            return dict(job)
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} did not finish")


def test_health_ready_version_and_docs(service: Service) -> None:
    with service.client(key=None) as http:
        assert http.get("/v1/health").json() == {"status": "ok"}
        ready = http.get("/v1/ready").json()
        assert ready["ready"] and ready["neo4j"] and ready["models"]
        assert ready["gds"] is None  # a caller without a key learns ready or not, no more
        assert http.get("/v1/version").json()["api"] == "v1"
    with service.client() as http:
        assert http.get("/v1/ready").json()["gds"]  # GDS answered with its version
        schema = http.get("/openapi.json").json()
        assert "/v1/namespaces/{namespace}/retrieve" in schema["paths"]
        # Off by default: their scripts come from a CDN, on the console's origin
        assert http.get("/docs").status_code == 404 and http.get("/redoc").status_code == 404


def test_retrieve_over_http_equals_the_client_in_process(service: Service) -> None:
    with service.client() as http:
        r = http.post(
            f"/v1/namespaces/{service.ns_a}/retrieve", json={"question": QUESTION, "top_k": 3}
        )
    assert r.status_code == 200, r.text
    got = r.json()
    with TeragClient(service.settings) as client:
        want = client.retrieve(QUESTION, top_k=3, namespace=service.ns_a)
    assert [p["id"] for p in got["passages"]] == [p.id for p in want.passages]
    assert [p["score"] for p in got["passages"]] == pytest.approx([p.score for p in want.passages])
    assert [m["name"] for m in got["matches"]] == [m.name for m in want.matches]
    assert got["score_kind"] == want.score_kind and got["mode"] == want.mode
    assert got["passages"][0]["doc_id"] and got["passages"][0]["title"]
    assert "Beetle" in got["passages"][0]["text"] or "Porsche" in got["passages"][0]["text"]


def test_namespaces_create_stats_and_drop(service: Service) -> None:
    name = f"svc-{uuid.uuid4().hex[:8]}-c"
    with service.client() as http:
        r = http.post("/v1/namespaces", json={"name": name})
        assert r.status_code == 201, r.text
        assert http.post("/v1/namespaces", json={"name": name}).status_code == 200  # exists
        assert name in [n["name"] for n in http.get("/v1/namespaces").json()]
        stats = http.get(f"/v1/namespaces/{service.ns_a}").json()
        assert stats["passages"] >= 8 and stats["concepts"] > 0 and stats["runs"]
        assert http.delete(f"/v1/namespaces/{name}").status_code == 204
        assert http.get(f"/v1/namespaces/{name}").status_code == 404


def test_texts_job_list_graph_and_delete(service: Service) -> None:
    name = f"svc-{uuid.uuid4().hex[:8]}-d"
    docs = [
        {"id": "kafka", "title": "Kafka", "text": "Franz Kafka wrote The Trial in Prague."},
        {"id": "prague", "title": "Prague", "text": "Prague is the capital of Bohemia."},
    ]
    with service.client() as http:
        try:
            r = http.post(f"/v1/namespaces/{name}/documents", json={"documents": docs})
            assert r.status_code == 202, r.text
            job = wait_job(http, r.json()["id"])
            assert job["state"] == "succeeded", job
            assert job["documents_done"] == job["documents_total"] == 2
            assert job["passages_done"] == job["passages_total"] == 2
            assert job["passages_new"] == 2
            # The same content again writes nothing new
            again = wait_job(
                http,
                http.post(f"/v1/namespaces/{name}/documents", json={"documents": docs}).json()[
                    "id"
                ],
            )
            assert again["passages_unchanged"] == 2 and again["passages_new"] == 0
            listed = http.get(f"/v1/namespaces/{name}/documents").json()
            assert {d["id"] for d in listed["documents"]} == {"kafka", "prague"}
            assert listed["total"] == 2
            g = http.get(
                f"/v1/namespaces/{name}/graph", params={"concept": "Prague", "depth": 2}
            ).json()
            labels = {n["label"] for n in g["nodes"]}
            assert labels == {"Concept", "Passage"}
            assert {n["properties"].get("passage_id") for n in g["nodes"]} >= {"kafka", "prague"}
            assert g["edges"]
            small = http.get(
                f"/v1/namespaces/{name}/graph",
                params={"concept": "Prague", "depth": 3, "max_nodes": 2},
            ).json()
            assert len(small["nodes"]) == 2 and small["truncated"]
            d = http.delete(f"/v1/namespaces/{name}/documents/kafka")
            assert d.status_code == 200 and d.json()["passages"] == 1
            left = http.get(f"/v1/namespaces/{name}/documents").json()["documents"]
            assert [x["id"] for x in left] == ["prague"]
        finally:
            http.delete(f"/v1/namespaces/{name}")


def test_upload_files(service: Service) -> None:
    name = f"svc-{uuid.uuid4().hex[:8]}-u"
    files = [
        ("files", ("notes.md", b"# Notes\n\nMarie Curie worked in Paris.", "text/markdown")),
        (
            "files",
            (
                "more.jsonl",
                b'{"id": "r1", "text": "Pierre Curie was born in Paris."}\n',
                "application/json",
            ),
        ),
    ]
    with service.client() as http:
        try:
            r = http.post(f"/v1/namespaces/{name}/documents/upload", files=files)
            assert r.status_code == 202, r.text
            job = wait_job(http, r.json()["id"])
            assert job["state"] == "succeeded", job
            ids = {
                d["id"] for d in http.get(f"/v1/namespaces/{name}/documents").json()["documents"]
            }
            assert ids == {"notes.md", "r1"}
        finally:
            http.delete(f"/v1/namespaces/{name}")


def test_cancel_a_job(service: Service) -> None:
    name = f"svc-{uuid.uuid4().hex[:8]}-x"
    # Enough documents for several groups, so the cancel lands before the last one
    docs = [{"id": f"d{i}", "text": f"Town {i} lies on river {i % 7}. " * 30} for i in range(300)]
    with service.client() as http:
        try:
            job = http.post(f"/v1/namespaces/{name}/documents", json={"documents": docs}).json()
            c = http.delete(f"/v1/jobs/{job['id']}")
            assert c.status_code == 202
            done = wait_job(http, job["id"])
            assert done["state"] == "cancelled"
            assert done["documents_done"] < 300
        finally:
            http.delete(f"/v1/namespaces/{name}")


def test_ask_stream_sends_passages_first_and_fails_cleanly_without_ollama(
    service: Service,
) -> None:
    """No Ollama in this service's environment (OLLAMA_HOST points nowhere here): the stream
    still opens with the passages, then ends with an error line, and the plain call is a 503
    (or 502) in the one error shape."""
    body = {"question": QUESTION, "top_k": 2, "stream": True}
    with (
        service.client() as http,
        http.stream("POST", f"/v1/namespaces/{service.ns_a}/ask", json=body) as r,
    ):
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(x) for x in r.iter_lines() if x.strip()]
    assert lines[0]["event"] == "passages" and len(lines[0]["passages"]) == 2
    assert lines[-1]["event"] in ("done", "error")
    if lines[-1]["event"] == "done":
        events = [x["event"] for x in lines if x["event"] != "token"]
        assert events == ["passages", "answer", "done"]


def test_answer_by_key_with_x_api_key_header(service: Service) -> None:
    with httpx.Client(base_url=service.url, headers={"X-API-Key": KEY_ALL}) as http:
        assert http.get("/v1/namespaces").status_code == 200
