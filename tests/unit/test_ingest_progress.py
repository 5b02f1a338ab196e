"""Progress inside one document: the batches an ingest writes grow from a small first one and
end when their extraction has taken its time (real spaCy), and a job's view adds the group in
hand (as its heartbeat recorded it) to the groups recorded."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from tqdm import tqdm

from terag_neo4j.core.documents import Passage
from terag_neo4j.indexing.batches import (
    FIRST_BATCH,
    GAP_S,
    MIN_FIT,
    batch_caps,
    batch_fit,
    batch_sizes,
)
from terag_neo4j.indexing.extraction import ExtractionCache
from terag_neo4j.indexing.extraction.spacy_extractor import SpacyExtractor
from terag_neo4j.indexing.pacing import FIRST_EXTRACT_STEP, extract_in_steps
from terag_neo4j.service.stored_job import StoredJob


def test_batches_grow_to_the_largest_and_cover_every_passage() -> None:
    sizes = batch_sizes(3000, 512)
    assert sizes[0] == FIRST_BATCH and sum(sizes) == 3000
    assert sizes[:7] == [8, 16, 32, 64, 128, 256, 512]
    assert max(sizes) == 512
    assert batch_sizes(5, 3) == [3, 2]  # a batch size under the first is kept
    assert batch_sizes(0, 512) == []
    assert list(itertools.islice(batch_caps(512), 8)) == [8, 16, 32, 64, 128, 256, 512, 512]


def test_the_next_batch_doubles_within_its_time_and_shrinks_past_it() -> None:
    # a batch's fixed cost: 8 passages in 7 s lets the next hold 16, and so on while in time
    assert batch_fit(8, 7.0, 512) == 16
    # 256 passages embedded and written in 30 s: the next batches hold GAP_S's worth
    assert batch_fit(256, 30.0, 512) == int(256 * GAP_S / 30.0)
    assert batch_fit(512, 1.0, 512) == 512  # a quiet machine: full batches
    assert batch_fit(8, 60.0, 512) == MIN_FIT  # never fewer
    assert batch_fit(1, 600.0, 3) == 3  # nor more than the largest


def test_a_batch_extraction_stops_at_its_time_with_the_first_passages(tmp_path: Path) -> None:
    extractor = SpacyExtractor()
    rivers = ("Laune", "Shannon", "Boyne", "Liffey")
    batch = [
        Passage(f"p{i}", "doc", i, "", f"Ardmore {i} lies on the River {rivers[i % 4]} in Kerry.")
        for i in range(40)
    ]

    def extract(within_s: float | None, cache: str) -> list[Any]:
        store = ExtractionCache(tmp_path / cache)
        with tqdm(disable=True) as bar:
            return extract_in_steps(extractor, batch, store, "run", bar, None, None, within_s)

    whole = extract(None, "a.sqlite")
    assert [e.passage_id for e in whole] == [p.id for p in batch]
    # No time at all: one step is still done (a batch is never empty), and no more
    cut = extract(0.0, "b.sqlite")
    assert len(cut) == FIRST_EXTRACT_STEP
    assert cut == whole[: len(cut)]
    # Time enough for every step: the whole batch
    assert extract(600.0, "c.sqlite") == whole
    # Passages the cache holds ride along free: the first step takes them and one fresh one
    with tqdm(disable=True) as bar:
        cache = ExtractionCache(tmp_path / "d.sqlite")
        extract_in_steps(extractor, batch[10:20], cache, "run", bar, None, None)
        cut = extract_in_steps(extractor, batch, cache, "run", bar, None, None, 0.0)
    assert len(cut) == 1  # the first passage is fresh: a step of one
    with tqdm(disable=True) as bar:
        cut = extract_in_steps(extractor, batch[10:], cache, "run", bar, None, None, 0.0)
    assert len(cut) == 10 + FIRST_EXTRACT_STEP and [e.cached for e in cut] == [True] * 10 + [False]


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
