"""Progress inside one document: the batches an ingest writes grow from a small first one, and a
job's view adds the group in hand (as its heartbeat recorded it) to the groups recorded."""

from __future__ import annotations

from typing import Any

from terag_neo4j.indexing.batches import FIRST_BATCH, batch_sizes
from terag_neo4j.service.stored_job import StoredJob


def test_batches_grow_to_the_largest_and_cover_every_passage() -> None:
    sizes = batch_sizes(3000, 512)
    assert sizes[0] == FIRST_BATCH and sum(sizes) == 3000
    assert sizes[:5] == [32, 64, 128, 256, 512]
    assert max(sizes) == 512
    assert batch_sizes(5, 3) == [3, 2]  # a batch size under the first is kept
    assert batch_sizes(0, 512) == []


def row(**kw: Any) -> dict[str, Any]:
    base = {
        "id": "0123456789abcdef", "namespace": "ns", "state": "running", "created": None,
        "documents_total": 2, "documents_done": 0, "passages_done": 0,
        "estimate_total": 1000, "estimate_done": 0,
    }  # fmt: skip
    return {**base, **kw}


def test_a_running_job_counts_its_group_in_hand_and_names_its_document() -> None:
    # group: 300 of its 2,400 real passages written; its estimate was 800 of the job's 1,000
    j = StoredJob(row(group_done=300, group_total=2400, group_estimate=800, document="big")).view()
    assert j.passages_done == 300 and j.document == "big"
    # the real count replaces the group's estimate; the other document is still estimated
    assert j.passages_total == 2400 + 200


def test_a_finished_job_shows_only_what_its_groups_recorded() -> None:
    j = StoredJob(
        row(state="cancelled", passages_done=64, group_done=300, group_total=2400, document="x")
    ).view()
    assert j.passages_done == 64 and j.passages_total == 64 and j.document is None


def test_a_queued_job_without_a_group_is_estimated() -> None:
    j = StoredJob(row(state="queued")).view()
    assert j.passages_done == 0 and j.passages_total == 1000 and j.document is None
