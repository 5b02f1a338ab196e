"""Local work (spaCy's extraction, the embedder) in steps of as many passages as take about
STEP_S, measured on the step before, starting small: a cancel, and the lease of the job that
runs the ingest, wait for at most one step of each. On a machine at load 20, a fixed 64
passages of one endless sentence kept spaCy busy for half a minute, and 128 passages the
embedder for 15 s. spaCy's results do not depend on how passages are grouped (the graph of
the sample corpus is the same however they are), nor do the embeddings beyond rounding.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from terag_neo4j.core.concepts import Extraction
from terag_neo4j.core.documents import Passage, ShouldStop, stop_if_asked
from terag_neo4j.core.extractor import Extractor
from terag_neo4j.embeddings import AnyEmbedder, Vectors
from terag_neo4j.indexing.extraction import ExtractionCache, extract_with_cache

STEP_S = 0.5
FIRST_EXTRACT_STEP = 1
MAX_EXTRACT_STEP = 64
FIRST_EMBED_STEP = 4
# At most two of the embedder's own batches (TERAG_EMBEDDING_BATCH, 64), so its length-sorted
# batching keeps its effect.
EMBED_STEP = 128


def next_step(done: int, took_s: float, most: int) -> int:
    """How many passages the next step takes: as many as fit in STEP_S at the rate of the
    step that took `took_s` for `done`, between 1 and `most`."""
    fit = int(done * STEP_S / took_s) if took_s > 0 else most
    return max(1, min(most, fit))


def extract_in_steps(
    extractor: Extractor,
    batch: Sequence[Passage],
    cache: ExtractionCache,
    run_id: str,
    bar: tqdm[Any],
    llm_step: int | None,
    should_stop: ShouldStop | None,
    within_s: float | None = None,
) -> list[Extraction]:
    """`batch` extracted (through `cache`) a step at a time, asking `should_stop` before each
    step: `llm_step` passages a step for an LLM, else steps paced by `next_step`. With
    `within_s`, no step starts after that many seconds: the extractions are then of the
    batch's first passages only (at least one step's)."""
    step = llm_step if llm_step is not None else FIRST_EXTRACT_STEP
    # A step counts the passages the cache does not hold: those cost nothing, and a step of
    # them only would pace the next one as if spaCy were instant (64 fresh passages after a
    # cached step kept a job's progress still for minutes at load 30).
    v = (extractor.name, extractor.model, extractor.version)
    keys = [cache.key(p.hash, *v) for p in batch]
    held = cache.get_many(keys)
    extractions: list[Extraction] = []
    i = 0
    end = time.perf_counter() + within_s if within_s is not None else None
    while i < len(batch) and (end is None or not extractions or time.perf_counter() < end):
        # Runs ahead in its own thread: a cancel raised here reaches `index` through the
        # future, and the pool's exit waits for this step only, not for the whole batch.
        stop_if_asked(should_stop, "extracting concepts")
        j, fresh = i, 0
        while j < len(batch) and fresh < step:
            fresh += keys[j] not in held
            j += 1
        part = batch[i:j]
        began = time.perf_counter()
        extractions += extract_with_cache(extractor, part, cache, run_id, len(part), bar)
        i += len(part)
        if llm_step is None and fresh:
            step = next_step(fresh, time.perf_counter() - began, MAX_EXTRACT_STEP)
    return extractions


def embed_in_steps(
    embedder: AnyEmbedder, texts: Sequence[str], should_stop: ShouldStop | None
) -> Vectors:
    """`texts` embedded a few at a time, asking `should_stop` before each step."""
    parts = []
    i, step = 0, FIRST_EMBED_STEP
    while i < len(texts):
        stop_if_asked(should_stop, "embedding passages")
        part = list(texts[i : i + step])
        began = time.perf_counter()
        parts.append(embedder.embed(part))
        i += len(part)
        step = next_step(len(part), time.perf_counter() - began, EMBED_STEP)
    return np.concatenate(parts)
