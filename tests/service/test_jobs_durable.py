"""Ingest jobs outlive their process: real `terag serve` processes killed with SIGKILL mid-job,
restarted or replaced by another process on the same Neo4j, and the job ends as if nothing
happened (its namespace equals a clean ingest of the same documents)."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.store import GraphStore
from tests.service.conftest import KEY_ALL, Service, running_service, service_env

pytestmark = pytest.mark.integration

LEASE_S = 3
# Enough documents for three groups (64 estimated passages each), so a kill lands mid-job
DOCS = [
    {
        "id": f"town-{i}",
        "text": f"Ardmore {i} is a town in County Kerry near Killarney {i % 9}. "
        f"The River Laune {i % 7} runs past its mill, built by Thomas Hennessy {i % 5}. " * 5,
    }
    for i in range(150)
]
FINISHED = ("succeeded", "failed", "cancelled")


@pytest.fixture(scope="module")
def clean_fingerprint(base_settings: Settings) -> Iterator[str]:
    """The namespace a clean, uninterrupted in-process ingest of DOCS makes."""
    ns = f"jobs-clean-{uuid.uuid4().hex[:8]}"
    with TeragClient(base_settings) as client:
        client.index(
            [Document(id=d["id"], text=d["text"]) for d in DOCS], namespace=ns, progress=False
        )
        try:
            yield client.store.namespaces.fingerprint(ns)
        finally:
            client.drop(ns)


def fingerprint(settings: Settings, ns: str) -> str:
    with TeragClient(settings) as client:
        return client.store.namespaces.fingerprint(ns)


def drop(settings: Settings, *names: str) -> None:
    with TeragClient(settings) as client:
        for ns in names:
            if client.store.namespaces.exists(ns):
                client.drop(ns)


def lease_owner(settings: Settings, job_id: str) -> str | None:
    with GraphStore.from_settings(settings) as store, store.session() as s:
        rec = s.run("MATCH (j:IngestJob {id: $id}) RETURN j.lease_owner AS o", id=job_id).single()
        return rec["o"] if rec else None


def held_by(settings: Settings, job_id: str) -> str:
    """The worker holding the job (host:pid:tag); between groups no one does for a moment."""
    end = time.monotonic() + 30
    with GraphStore.from_settings(settings) as store, store.session() as s:
        while time.monotonic() < end:
            q = "MATCH (j:IngestJob {id: $id}) RETURN j.lease_owner AS o"
            if owner := s.run(q, id=job_id).single()["o"]:  # type: ignore[index]
                return str(owner)
            time.sleep(0.02)
    raise AssertionError(f"no worker took job {job_id} for 30 s")


def job(url: str, job_id: str) -> dict[str, Any]:
    r = httpx.get(f"{url}/v1/jobs/{job_id}", headers=auth(), timeout=30)
    assert r.status_code == 200, r.text
    return dict(r.json())


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {KEY_ALL}"}


def submit(url: str, ns: str) -> str:
    r = httpx.post(
        f"{url}/v1/namespaces/{ns}/documents", json={"documents": DOCS}, headers=auth(), timeout=60
    )
    assert r.status_code == 202, r.text
    return str(r.json()["id"])


def wait_mid_job(url: str, job_id: str, timeout: float = 120) -> dict[str, Any]:
    """The job once at least one group is recorded and more are left."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        j = job(url, job_id)
        assert j["state"] not in FINISHED, f"finished before it could be interrupted: {j}"
        if j["documents_done"] > 0:
            return j
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} made no progress in {timeout:.0f} s")


def wait_finished(url: str, job_id: str, timeout: float = 120) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        j = job(url, job_id)
        if j["state"] in FINISHED:
            return j
        time.sleep(0.25)
    raise AssertionError(f"job {job_id} did not finish in {timeout:.0f} s")


def start(stack: ExitStack, env: dict[str, str], settings: Settings, logs: list[Path]) -> list[Any]:
    """Services started side by side (each loads its models), stopped when `stack` closes."""
    cms = [running_service(env, settings, ("unused-a", "unused-b"), log) for log in logs]
    with ThreadPoolExecutor(len(cms)) as pool:
        services = list(pool.map(lambda cm: cm.__enter__(), cms))
    for cm in cms:
        stack.push(cm.__exit__)
    return services


@pytest.fixture
def env(base_settings: Settings) -> dict[str, str]:
    """The services' environment, with a job queue of this test's own: the session's `service`
    (tests/service/conftest.py) serves the shared test queue, and its worker would otherwise
    take these jobs too, a third process the tests do not know of."""
    return {
        **service_env(base_settings, "unused-a", "unused-b"),
        "TERAG_JOB_LEASE_S": str(LEASE_S),
        "TERAG_JOB_QUEUE": f"durable-{uuid.uuid4().hex[:12]}",
    }


def kill(svc: Service) -> None:
    assert svc.pid is not None
    os.kill(svc.pid, signal.SIGKILL)


def kill_holder(
    settings: Settings, job_id: str, a: Service, b: Service
) -> tuple[str, Service, Service]:
    """Kills the process holding the job's lease, while it holds it: a worker gives the job
    back between groups, so the holder read a moment ago may have let go (and the other taken
    it) by the time it is killed; a frozen process cannot, so it is stopped, checked, then
    killed (or let go on and read again). Returns (owner, victim, survivor)."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        owner = held_by(settings, job_id)
        victim, survivor = (a, b) if owner.split(":")[-2] == str(a.pid) else (b, a)
        assert victim.pid is not None
        os.kill(victim.pid, signal.SIGSTOP)
        if lease_owner(settings, job_id) == owner:
            kill(victim)
            return owner, victim, survivor
        os.kill(victim.pid, signal.SIGCONT)
    raise AssertionError(f"no worker could be caught holding job {job_id} for 30 s")


def test_a_job_survives_kill_9_and_the_restarted_service_finishes_it(
    base_settings: Settings, env: dict[str, str], clean_fingerprint: str, tmp_path: Path
) -> None:
    ns = f"jobs-kill-{uuid.uuid4().hex[:8]}"
    try:
        with ExitStack() as stack:
            (first,) = start(stack, env, base_settings, [tmp_path / "first.log"])
            job_id = submit(first.url, ns)
            mid = wait_mid_job(first.url, job_id)
            kill(first)
        with ExitStack() as stack:
            (second,) = start(stack, env, base_settings, [tmp_path / "second.log"])
            done = wait_finished(second.url, job_id)
        assert done["state"] == "succeeded", done
        assert done["documents_done"] == done["documents_total"] == len(DOCS)
        assert 0 < mid["documents_done"] < len(DOCS)
        # Nothing indexed twice nor left out: the graph equals a clean ingest's
        assert fingerprint(base_settings, ns) == clean_fingerprint
    finally:
        drop(base_settings, ns)


def test_two_processes_share_jobs_and_one_finishes_what_the_killed_one_ran(
    base_settings: Settings, env: dict[str, str], clean_fingerprint: str, tmp_path: Path
) -> None:
    ns, cancelled_ns = f"jobs-two-{uuid.uuid4().hex[:8]}", f"jobs-cxl-{uuid.uuid4().hex[:8]}"
    try:
        with ExitStack() as stack:
            a, b = start(stack, env, base_settings, [tmp_path / "a.log", tmp_path / "b.log"])
            # Submitted to A: listed, polled and cancelled through B
            first = submit(a.url, cancelled_ns)
            listed = httpx.get(f"{b.url}/v1/jobs", headers=auth(), timeout=30).json()
            assert first in [j["id"] for j in listed]
            assert job(b.url, first)["namespace"] == cancelled_ns
            r = httpx.delete(f"{b.url}/v1/jobs/{first}", headers=auth(), timeout=30)
            assert r.status_code == 202
            gone = wait_finished(a.url, first, timeout=30)
            assert gone["state"] == "cancelled", gone
            assert gone["documents_done"] < len(DOCS)

            # Whichever process runs the next job is killed; the other finishes it
            job_id = submit(a.url, ns)
            wait_mid_job(a.url, job_id)
            owner, victim, survivor = kill_holder(base_settings, job_id, a, b)
            assert owner.split(":")[-2] == str(victim.pid), owner
            assert lease_owner(base_settings, job_id) == owner  # killed holding the job
            t0 = time.monotonic()
            done = wait_finished(survivor.url, job_id)
            took = time.monotonic() - t0
        assert done["state"] == "succeeded", done
        assert done["documents_done"] == len(DOCS)
        assert took < 60, f"took {took:.0f} s to finish after the kill"
        assert fingerprint(base_settings, ns) == clean_fingerprint
    finally:
        drop(base_settings, ns, cancelled_ns)
