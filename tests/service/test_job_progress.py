"""A job's progress inside one large document, through a real `terag serve`: its passages done
rise while the document is indexed (not only when it ends), the job names the document it is on,
and a cancel stops it mid-document within seconds."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from tests.service.conftest import KEY_ALL, Service, running_service, service_env

pytestmark = pytest.mark.integration

FINISHED = ("succeeded", "failed", "cancelled")
# Short passages keep spaCy's and the embedder's work small while the document still makes
# thousands of passages, each a few one-line paragraphs (the shape that showed no progress).
CHUNK_TOKENS = 32
LINES = 4_200
MIN_PASSAGES = 3_000


def big_text(tag: str, lines: int = LINES) -> str:
    rivers = ("Laune", "Shannon", "Boyne", "Liffey", "Suir", "Barrow", "Lee")
    return "\n\n".join(
        f"Ardmore {tag} {i} lies on the River {rivers[i % 7]} near Killarney {i % 97}."
        for i in range(lines)
    )


@pytest.fixture(scope="module")
def svc(base_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A service of its own job queue (the session's service would take these jobs too), with
    short passages."""
    env = {
        **service_env(base_settings, "unused-a", "unused-b"),
        "TERAG_JOB_QUEUE": f"progress-{uuid.uuid4().hex[:12]}",
        "TERAG_CHUNK_TOKENS": str(CHUNK_TOKENS),
        "TERAG_CHUNK_OVERLAP": "0",
    }
    log: Path = tmp_path_factory.mktemp("serve-progress") / "serve.log"
    with running_service(env, base_settings, ("unused-a", "unused-b"), log) as s:
        yield s


@pytest.fixture
def namespace(base_settings: Settings) -> Iterator[str]:
    ns = f"progress-{uuid.uuid4().hex[:8]}"
    yield ns
    with TeragClient(base_settings) as client:
        if client.store.namespaces.exists(ns):
            client.drop(ns)


def submit(http: httpx.Client, ns: str, doc_id: str, text: str) -> str:
    r = http.post(
        f"/v1/namespaces/{ns}/documents", json={"documents": [{"id": doc_id, "text": text}]}
    )
    assert r.status_code == 202, r.text
    return str(r.json()["id"])


def poll(http: httpx.Client, job_id: str) -> dict[str, Any]:
    r = http.get(f"/v1/jobs/{job_id}")
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_passages_done_rises_inside_one_large_document(svc: Service, namespace: str) -> None:
    with svc.client(KEY_ALL) as http:
        job_id = submit(http, namespace, "big-doc", big_text("a"))
        seen: list[dict[str, Any]] = []
        end = time.monotonic() + 900
        while time.monotonic() < end:
            j = poll(http, job_id)
            seen.append(j)
            if j["state"] in FINISHED:
                break
            time.sleep(0.5)
    last = seen[-1]
    assert last["state"] == "succeeded", last
    # One document: the count used to move only at its end, from 0 to the total at once
    assert last["documents_total"] == 1 and last["passages_done"] >= MIN_PASSAGES, last
    assert last["document"] is None  # a finished job is on no document
    running = [j for j in seen[:-1] if j["state"] == "running"]
    dones = [j["passages_done"] for j in running]
    assert dones == sorted(dones), f"passages done went back: {dones}"
    rises = sum(1 for a, b in itertools.pairwise(dones) if b > a)
    assert rises >= 3, f"passages done rose {rises} time(s) before the job ended: {dones}"
    moving = [j for j in running if 0 < j["passages_done"] < last["passages_done"]]
    assert moving, "no poll saw the document part done"
    for j in moving:
        assert j["document"] == "big-doc", j
        assert j["documents_done"] == 0
        assert j["passages_done"] <= j["passages_total"], j


def test_a_cancel_stops_a_large_document_mid_way(svc: Service, namespace: str) -> None:
    with svc.client(KEY_ALL) as http:
        job_id = submit(http, namespace, "big-doc", big_text("b"))
        end = time.monotonic() + 600
        while time.monotonic() < end:
            j = poll(http, job_id)
            assert j["state"] not in FINISHED, j
            if j["passages_done"] > 0:
                break
            time.sleep(0.25)
        else:
            raise AssertionError("the job showed no passages done in 600 s")
        asked = time.monotonic()
        r = http.delete(f"/v1/jobs/{job_id}")
        assert r.status_code == 202, r.text  # asked: a running job stops at its next check
        while time.monotonic() - asked < 60:
            j = poll(http, job_id)
            if j["state"] in FINISHED:
                break
            time.sleep(0.2)
        took = time.monotonic() - asked
    assert j["state"] == "cancelled", j
    # About a second for the heartbeat to see it, plus one extraction or embedding step (24.7 s
    # at a load of 40 on 2 cores); the whole document would take minutes more
    assert took < 60, f"the cancel took {took:.1f} s"
    assert j["passages_done"] < MIN_PASSAGES
    # the batches written before the cancel stay in the namespace, and the view counts them
    # (a finished job's view read 0 of 0)
    assert 0 < j["passages_done"] == j["passages_total"], j
