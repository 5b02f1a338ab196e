"""The job store's limits on the real Neo4j: a key's jobs are counted and created in one
transaction, so 24 concurrent submissions against a limit of 5 create exactly 5 (the count and
the creation were two steps, and all 24 passed the count), the per-minute cap holds the same
way, and the job list pages without skipping or repeating a job."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.service.job_store import JobLimit, JobStore
from terag_neo4j.store import GraphStore

pytestmark = pytest.mark.integration

DOCS = [Document(id="a", text="Alpha is a town.", title="Alpha")]


@pytest.fixture
def jobs(base_settings: Settings) -> Iterator[tuple[JobStore, str]]:
    """A job store on a queue of its own and a tag its namespaces and keys start with; their
    jobs are deleted afterwards."""
    tag = f"joblimits-{uuid.uuid4().hex[:8]}"
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
            s.run("MATCH (k:IngestJobKey) WHERE k.key STARTS WITH $tag DELETE k", tag=tag).consume()
        store.close()


def submit_many(js: JobStore, tag: str, key: str, n: int, **limits: int) -> tuple[int, int]:
    """`n` submissions at once from one key: (created, refused)."""

    def one(i: int) -> bool:
        try:
            js.submit(f"{tag}-ns{i % 3}", DOCS, key, 256, **limits)
        except JobLimit:
            return False
        return True

    with ThreadPoolExecutor(n) as pool:
        made = list(pool.map(one, range(n)))
    return sum(made), n - sum(made)


def test_concurrent_submissions_never_pass_the_unfinished_limit(
    jobs: tuple[JobStore, str],
) -> None:
    js, tag = jobs
    js.ensure_schema()
    assert submit_many(js, tag, f"{tag}-key", 24, max_unfinished=5) == (5, 19)
    # Another key has its own count
    assert submit_many(js, tag, f"{tag}-other", 3, max_unfinished=5) == (3, 0)
    with pytest.raises(JobLimit) as e:
        js.submit(f"{tag}-ns0", DOCS, f"{tag}-key", 256, max_unfinished=5)
    assert e.value.unfinished == 5


def test_concurrent_submissions_never_pass_the_per_minute_cap(jobs: tuple[JobStore, str]) -> None:
    js, tag = jobs
    js.ensure_schema()
    assert submit_many(js, tag, f"{tag}-key", 16, per_minute=4) == (4, 12)


def test_the_job_list_pages_without_skipping_or_repeating(jobs: tuple[JobStore, str]) -> None:
    js, tag = jobs
    made = [js.submit(f"{tag}-page", DOCS, f"{tag}-key", 256).id for _ in range(7)]
    ns = [f"{tag}-page"]
    pages = [js.recent(ns, limit=3, offset=o) for o in (0, 3, 6, 9)]
    assert [len(p) for p in pages] == [3, 3, 1, 0]
    seen = [j.id for p in reversed(pages) for j in p]  # each page oldest first, newest page 0
    assert sorted(seen) == sorted(made) and len(set(seen)) == 7
    assert [j.id for j in js.recent(ns, limit=1000)] == seen
