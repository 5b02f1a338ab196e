"""The ingest job store on the real Neo4j: claims are exclusive, a dead worker's job is taken
over once its lease runs out (and the dead worker can no longer record anything), a cancel
never lets a job end 'succeeded', namespaces take turns, expired jobs answer apart from
unknown ones, and dropping a namespace fails its jobs.

Each test has a job queue of its own: no service's worker on the same database takes its
jobs."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.job_store import JobStore
from terag_neo4j.service.jobs import JobRegistry
from terag_neo4j.service.runtime import Runtime
from terag_neo4j.service.settings import Principal, ServiceSettings
from terag_neo4j.store import GraphStore

pytestmark = pytest.mark.integration

DOCS = [
    Document(id="a", text="Alpha is a town.", title="Alpha", pages=(0, 6)),
    Document(id="b", text="Beta is a river.", source="b.txt", is_passage=True),
    Document(id="c", text="Gamma is a hill.", title_is_name=False),
]
LEASE_S = 1.5


@pytest.fixture
def jobs(base_settings: Settings) -> Iterator[tuple[JobStore, str]]:
    """A job store and a tag its namespaces start with; their jobs are deleted afterwards."""
    tag = f"jobstore-{uuid.uuid4().hex[:8]}"
    store = GraphStore.from_settings(base_settings)
    try:
        yield JobStore(store, queue=tag), tag
    finally:
        with store.session() as s:
            s.run(
                "MATCH (j:IngestJob) WHERE j.namespace STARTS WITH $tag "
                "OPTIONAL MATCH (d:IngestJobDocument {job_id: j.id}) DETACH DELETE d, j",
                tag=tag,
            ).consume()
        store.close()


def report(passages: int) -> IngestReport:
    return IngestReport(
        run_id="r", namespace="n", extractor="spacy", model="m", passages_total=passages
    )


def test_a_claim_is_exclusive_and_a_dead_workers_job_is_taken_over(
    jobs: tuple[JobStore, str],
) -> None:
    js, tag = jobs
    job = js.submit(f"{tag}-x", DOCS, "key1", 256)
    assert job.view().state == "queued"
    first = js.claim("w1", LEASE_S)
    assert first is not None and first.id == job.id
    # The documents come back as they were sent
    docs, estimate = js.next_group(job.id, 0, 100, 100)
    assert docs == DOCS and estimate == 3
    assert js.claim("w2", LEASE_S) is None  # held
    assert js.heartbeat(job.id, "w1", LEASE_S, 3).mine
    time.sleep(LEASE_S + 0.3)  # w1 dies: no more heartbeats
    second = js.claim("w2", LEASE_S)
    assert second is not None and second.id == job.id
    assert not js.heartbeat(job.id, "w1", LEASE_S, 3).mine
    # The dead worker's late record is refused; the live one's counts
    assert js.group_done(job.id, "w1", 0, 3, 3, report(3)) is None
    assert js.group_done(job.id, "w2", 0, 2, 2, report(2)) == "running"
    third = js.claim("w2", LEASE_S)
    assert third is not None and third.documents_done == 2
    assert js.group_done(job.id, "w2", 2, 1, 1, report(1)) == "succeeded"
    done = js.get(job.id)
    assert done is not None
    assert (done.view().passages_done, done.view().passages_total) == (3, 3)


def test_a_cancelled_job_never_starts_and_never_ends_succeeded(
    jobs: tuple[JobStore, str],
) -> None:
    js, tag = jobs
    queued = js.submit(f"{tag}-q", DOCS, "key1", 256)
    js.cancel(queued.id)
    assert js.get(queued.id).view().state == "cancelled"  # type: ignore[union-attr]
    assert js.claim("w1", LEASE_S) is None

    running = js.submit(f"{tag}-r", DOCS, "key1", 256)
    assert js.claim("w1", LEASE_S) is not None
    js.cancel(running.id)  # just after the claim: the worker is asked
    assert js.get(running.id).view().state == "running"  # type: ignore[union-attr]
    assert js.heartbeat(running.id, "w1", LEASE_S, 3).cancel
    # Even a group that completes the job meanwhile ends it 'cancelled'
    assert js.group_done(running.id, "w1", 0, 3, 3, report(3)) == "cancelled"

    orphan = js.submit(f"{tag}-o", DOCS, "key1", 256)
    assert js.claim("w1", LEASE_S) is not None
    js.cancel(orphan.id)
    time.sleep(LEASE_S + 0.3)  # its worker died before it saw the cancel
    assert js.claim("w2", LEASE_S) is None
    assert js.get(orphan.id).view().state == "cancelled"  # type: ignore[union-attr]


def test_a_cancelled_jobs_view_counts_the_batches_its_group_wrote(
    jobs: tuple[JobStore, str],
) -> None:
    """An ingest cancelled in the middle of a group keeps the batches it wrote: its view counts
    them (it read 0 of 0), whether its worker ends it with the count it saw last or the job is
    ended after its worker died, with the count its heartbeat last recorded."""
    js, tag = jobs
    group = {"done": 2, "total": 3, "estimate": 3, "document": "a"}
    for written, want in ((None, 2), (3, 3)):  # the heartbeat's count, or one batch more
        job = js.submit(f"{tag}-c", DOCS, "key1", 256)
        assert js.claim("w1", LEASE_S) is not None
        assert js.heartbeat(job.id, "w1", LEASE_S, 3, group).mine
        js.cancel(job.id)
        js.finish(job.id, "w1", "cancelled", **({"written": written} if written else {}))
        v = js.get(job.id).view()  # type: ignore[union-attr]
        assert (v.state, v.passages_done, v.passages_total) == ("cancelled", want, want)

    orphan = js.submit(f"{tag}-o", DOCS, "key1", 256)
    assert js.claim("w1", LEASE_S) is not None
    assert js.heartbeat(orphan.id, "w1", LEASE_S, 3, group).mine
    js.cancel(orphan.id)
    time.sleep(LEASE_S + 0.3)  # its worker died before it saw the cancel
    assert js.claim("w2", LEASE_S) is None
    v = js.get(orphan.id).view()  # type: ignore[union-attr]
    assert (v.state, v.passages_done, v.passages_total) == ("cancelled", 2, 2)


def test_namespaces_take_turns_and_jobs_of_one_namespace_keep_their_order(
    jobs: tuple[JobStore, str],
) -> None:
    js, tag = jobs
    x1 = js.submit(f"{tag}-x", DOCS, "key1", 256)
    x2 = js.submit(f"{tag}-x", DOCS, "key1", 256)
    y1 = js.submit(f"{tag}-y", DOCS, "key2", 256)
    order = []
    for _ in range(4):  # one group each time, then the job goes back to the queue
        job = js.claim("w1", LEASE_S)
        assert job is not None
        order.append(job.id)
        js.group_done(job.id, "w1", job.documents_done, 1, 1, report(1))
    assert order == [x1.id, y1.id, x1.id, y1.id]
    assert x2.id not in order  # behind x1 in its namespace


def test_expired_and_unknown_jobs_are_told_apart_after_the_key_is_checked(
    jobs: tuple[JobStore, str], base_settings: Settings
) -> None:
    js, tag = jobs
    ns = f"{tag}-e"
    job = js.submit(ns, DOCS, "key1", 256)
    js.cancel(job.id)
    with js.store.session() as s:  # finished two days ago
        s.run(
            "MATCH (j:IngestJob {id: $id}) SET j.finished = datetime() - duration('P2D')",
            id=job.id,
        ).consume()
    js.sweep(24 * 3600)
    assert js.get(job.id).expired  # type: ignore[union-attr]
    service = ServiceSettings(job_retention_hours=24)
    with TeragClient(base_settings) as client:
        registry = JobRegistry(Runtime(service, client=client), service)
        owner = Principal("k1", frozenset({ns}), True)
        stranger = Principal("k2", frozenset({"elsewhere"}), True)
        with pytest.raises(ServiceError) as expired:
            registry.get(client, job.id, owner)
        with pytest.raises(ServiceError) as unknown:
            registry.get(client, "0123456789abcdef", owner)
        with pytest.raises(ServiceError) as hidden:
            registry.get(client, job.id, stranger)
    assert expired.value.status == unknown.value.status == hidden.value.status == 404
    assert "removed" in expired.value.message and "removed" not in unknown.value.message
    assert hidden.value.message == unknown.value.message.replace("0123456789abcdef", job.id)
    assert ns not in hidden.value.message


def test_dropping_a_namespace_fails_its_unfinished_jobs(jobs: tuple[JobStore, str]) -> None:
    js, tag = jobs
    ns = f"{tag}-d"
    job = js.submit(ns, DOCS, "key1", 256)
    js.store.namespaces.drop(ns)  # what `terag drop` and DELETE /v1/namespaces/... run
    after = js.get(job.id)
    assert after is not None
    assert after.view().state == "failed"
    assert any("NamespaceDropped" in e for e in after.view().errors)
    js.sweep(24 * 3600)  # its documents go with it
    assert js.next_group(job.id, 0, 100, 100) == ([], 0)
