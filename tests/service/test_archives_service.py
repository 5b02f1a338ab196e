"""Namespace archives through a real `terag serve`: `TeragRemote` exports a namespace (streamed)
and imports it as a job into a new one with the same fingerprint and top-10s; keys are held to
their scopes; refused archives (truncated, tampered, newer, another embedding model, a target
that holds passages) are one-line 422s that leave the target untouched and nothing in the
spool; an import whose service is killed -9 midway is finished by the restarted service."""

from __future__ import annotations

import json
import os
import re
import signal
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.indexing.namespace_import import import_archive
from terag_neo4j.service.remote_client import RemoteError, TeragRemote
from terag_neo4j.store import GraphStore
from terag_neo4j.store.archive_format import FORMAT, FORMAT_VERSION, MANIFEST, ArchiveWriter
from terag_neo4j.store.archive_rows import encode_vector
from tests.service.conftest import (
    KEY_A_READ,
    KEY_ALL,
    KEY_B,
    Service,
    running_service,
    service_env,
)

pytestmark = pytest.mark.integration

QUESTIONS = ["Who designed the Volkswagen Beetle?", "Where is the headquarters of Porsche?"]
FINISHED = ("succeeded", "failed", "cancelled")


def remote(svc: Service, key: str = KEY_ALL) -> TeragRemote:
    return TeragRemote(svc.url, api_key=key, timeout=120)


def fingerprint(settings: Settings, ns: str) -> str | None:
    with GraphStore.from_settings(settings) as store:
        return store.namespaces.fingerprint(ns) if store.namespaces.exists(ns) else None


def target(settings: Settings, ns: str, store: GraphStore | None = None) -> dict[str, Any] | None:
    if store is None:
        with GraphStore.from_settings(settings) as own:
            return target(settings, ns, own)
    rows = store.read("import_target", namespace=ns)
    return dict(rows[0]) if rows else None


def drop(settings: Settings, *names: str) -> None:
    with GraphStore.from_settings(settings) as store:
        for ns in names:
            if store.namespaces.exists(ns) or store.read("import_target", namespace=ns):
                store.namespaces.drop(ns)


def spooled(settings: Settings) -> list[str]:
    spool = Path(settings.home) / "spool"
    return sorted(p.name for p in spool.iterdir()) if spool.is_dir() else []


@pytest.fixture(scope="module")
def exported(service: Service, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "a.zip"
    with remote(service) as r:
        return r.export_namespace(out, service.ns_a)


def test_an_export_imported_over_http_has_the_sources_fingerprint_and_top_10s(
    service: Service, exported: Path
) -> None:
    ns = f"himp-{uuid.uuid4().hex[:8]}"
    settings = service.settings
    try:
        with remote(service) as r:
            job = r.import_namespace(exported, ns, wait=True, timeout=300)
            assert job.state == "succeeded" and job.kind == "import", job
            with zipfile.ZipFile(exported) as zf:
                passages = json.loads(zf.read(MANIFEST))["counts"]["passages"]
            assert job.passages_done == job.passages_total == passages > 0
            assert fingerprint(settings, ns) == fingerprint(settings, service.ns_a)
            for q in QUESTIONS:
                got = [p.id for p in r.retrieve(q, top_k=10, namespace=ns).passages]
                want = [p.id for p in r.retrieve(q, top_k=10, namespace=service.ns_a).passages]
                assert got == want and got, q
        assert not [n for n in spooled(settings) if n.startswith(job.id)]
    finally:
        drop(settings, ns)


def test_keys_are_held_to_their_scopes(service: Service, exported: Path) -> None:
    with remote(service, KEY_A_READ) as r:
        assert r.export_namespace(exported.with_name("read.zip"), service.ns_a).stat().st_size
        with pytest.raises(RemoteError) as e:
            r.import_namespace(exported, service.ns_a)
        assert e.value.status == 403
    with remote(service, KEY_B) as r, pytest.raises(RemoteError) as e:
        r.export_namespace(exported.with_name("b.zip"), service.ns_a)
    assert e.value.status == 403 and not exported.with_name("b.zip").exists()
    with service.client() as c:
        wrong = c.post(
            f"/v1/namespaces/imp-{uuid.uuid4().hex[:6]}/import",
            content=exported.read_bytes(),
            headers={"Content-Type": "application/json"},
        )
        assert wrong.status_code == 415, wrong.text
        assert c.get("/v1/namespaces/no-such-ns-x/export").status_code == 404


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i.filename) for i in zf.infolist()}


def _write(out: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out


def _manifest(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path, Path], Path]:
    def make(src: Path, out: Path) -> Path:
        members = _members(src)
        m = json.loads(members[MANIFEST])
        edit(m)
        return _write(out, {**members, MANIFEST: json.dumps(m).encode()})

    return make


def _truncated(src: Path, out: Path) -> Path:
    out.write_bytes(src.read_bytes()[: src.stat().st_size * 2 // 3])
    return out


def _tampered(src: Path, out: Path) -> Path:
    members = _members(src)
    members["passages.jsonl"] = members["passages.jsonl"].replace(b"Porsche", b"Porshce", 1)
    return _write(out, members)


REFUSED: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "truncated": (_truncated, "zip|corrupt|truncated"),
    "tampered": (_tampered, "does not match its manifest"),
    "newer": (_manifest(lambda m: m.update(format_version=99)), "newer"),
    "other model": (
        _manifest(lambda m: m["embedding"].update(model="all-MiniLM-L6-v2")),
        "^TERAG_EMBEDDING_MODEL: ",
    ),
    "whole": (lambda src, out: src, "holds [0-9]+ passages"),
}


@pytest.mark.adversarial
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_refused_archive_is_one_line_and_leaves_the_target_untouched(
    service: Service, exported: Path, tmp_path: Path, case: str
) -> None:
    """Each archive goes to a namespace that holds passages (B) and, but for the complete
    one, to a new one: a 422 before any job, B's graph and the spool as they were."""
    make, message = REFUSED[case]
    bad = make(exported, tmp_path / "bad.zip")
    settings = service.settings
    fresh = f"href-{uuid.uuid4().hex[:8]}"
    before = (fingerprint(settings, service.ns_b), spooled(settings))
    targets = [service.ns_b] if case in ("whole", "other model") else [service.ns_b, fresh]
    with remote(service) as r:
        jobs_before = len(r.http.get("/v1/jobs").json())
        for ns in targets:
            with pytest.raises(RemoteError) as e:
                r.import_namespace(bad, ns)
            assert e.value.status == 422 and "\n" not in e.value.message, e.value
            assert re.search(message, e.value.message), e.value.message
        assert len(r.http.get("/v1/jobs").json()) == jobs_before  # no job was created
    assert target(settings, fresh) is None
    assert (fingerprint(settings, service.ns_b), spooled(settings)) == before


# ------------------------------------------------------------------------ kill -9 and resume

LEASE_S = 3
DIMS = 384


def synthetic_archive(path: Path, passages: int = 6000) -> Path:
    """A namespace of `passages` passages, a concept per ten and their links: large enough
    that its import runs for seconds, so a kill lands inside it."""
    w = ArchiveWriter()
    data = w.take()
    w.add("namespace.jsonl", {"props": {"extractor": "spacy"}})
    docs = passages // 10
    for d in range(docs):
        w.add("documents.jsonl", {"id": f"doc-{d}", "passages": 10})
    for i in range(passages):
        vec = encode_vector([((i * 7 + k) % 13) / 13.0 for k in range(DIMS)])
        props = {"id": f"doc-{i // 10}#{i % 10}", "hash": f"h{i}", "text": f"Passage {i} text."}
        w.add("passages.jsonl", {"props": props, "embedding": vec})
        if i % 500 == 0:
            data += w.take()
    for d in range(docs):
        w.add("concepts.jsonl", {"props": {"key": f"entity:c{d}", "frequency": 10}})
    for i in range(passages):
        link = {"concept": f"entity:c{i // 10}", "passage": f"doc-{i // 10}#{i % 10}"}
        w.add("has_passage.jsonl", link)
    counts = {"documents": docs, "passages": passages, "concepts": docs, "has_passage": passages}
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "namespace": "synthetic",
        "embedding": {"model": "synthetic", "dimensions": DIMS},
        "counts": counts,
    }
    path.write_bytes(data + w.take() + w.finish(manifest))
    return path


@pytest.fixture
def env(base_settings: Settings) -> dict[str, str]:
    """A queue of this test's own (the session's service would take its job too)."""
    return {
        **service_env(base_settings, "unused-a", "unused-b"),
        "TERAG_JOB_LEASE_S": str(LEASE_S),
        "TERAG_JOB_QUEUE": f"archive-{uuid.uuid4().hex[:12]}",
    }


@pytest.fixture
def names(base_settings: Settings) -> Iterator[tuple[str, str]]:
    tag = uuid.uuid4().hex[:8]
    pair = (f"kill-{tag}", f"clean-{tag}")
    yield pair
    drop(base_settings, *pair)


def job(url: str, job_id: str) -> dict[str, Any]:
    r = httpx.get(f"{url}/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {KEY_ALL}"})
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_an_import_killed_9_midway_is_finished_by_the_restarted_service(
    base_settings: Settings, env: dict[str, str], names: tuple[str, str], tmp_path: Path
) -> None:
    ns, clean = names
    archive = synthetic_archive(tmp_path / "synthetic.zip")
    with GraphStore.from_settings(base_settings) as store:
        import_archive(store, archive, clean)
    seen: dict[str, Any] = {}
    with ExitStack() as stack:
        first = stack.enter_context(
            running_service(env, base_settings, ("unused-a", "unused-b"), tmp_path / "1.log")
        )
        assert first.pid is not None
        store = stack.enter_context(GraphStore.from_settings(base_settings))
        with remote(first) as r:
            job_id = r.import_namespace(archive, ns).id
        end = time.monotonic() + 120
        while time.monotonic() < end:  # caught holding the namespace mid-import, then killed
            t = target(base_settings, ns, store)
            if t and t["importing"] == job_id and t["passages"]:
                os.kill(first.pid, signal.SIGSTOP)
                seen = target(base_settings, ns, store) or {}
                os.kill(first.pid, signal.SIGKILL)
                break
            assert job(first.url, job_id)["state"] not in FINISHED, "ended before the kill"
            time.sleep(0.05)
    assert seen.get("importing") == job_id and seen["passages"] > 0, seen
    with running_service(env, base_settings, ("a", "b"), tmp_path / "2.log") as second:
        end = time.monotonic() + 300
        while (done := job(second.url, job_id))["state"] not in FINISHED:
            assert time.monotonic() < end, done
            time.sleep(0.25)
    assert done["state"] == "succeeded" and done["passages_done"] == 6000, done
    assert fingerprint(base_settings, ns) == fingerprint(base_settings, clean)
    assert (target(base_settings, ns) or {}).get("importing") is None
    assert not [n for n in spooled(base_settings) if n.startswith(job_id)]
