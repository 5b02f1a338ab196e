"""The ingest's batches run as three overlapped stages: while batch i is written (on the calling
thread, which holds the namespace's write pin), batch i+1 is extracted and embedded on a thread
each. spaCy (or the LLM server), the embedder and Neo4j each keep a core busy, and the write no
longer waits for the next batch's vectors, nor the vectors for the write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from terag_neo4j import tracing

B = TypeVar("B")  # a batch
X = TypeVar("X")  # its extractions
V = TypeVar("V")  # its vectors


def run_overlapped(
    batches: Iterable[B],
    extract: Callable[[B], X],
    embed: Callable[[B, Future[X]], V],
    write: Callable[[int, B, X, V], None],
) -> None:
    """For each batch in order: `extract(batch)` and `embed(batch, its extraction's future)` on
    their own threads, one batch ahead of `write(i, batch, extractions, vectors)` here. Writes
    keep the batches' order. An error (or a cancel, raised by a stage) stops the run: stages not
    begun are dropped, each running one ends its current step, and the error is raised here.
    `batches` is read lazily, one batch ahead of the write: a generator may size the next batch
    from how the last ones went."""
    it = iter(batches)
    first = next(it, None)
    if first is None:
        return
    with (
        ThreadPoolExecutor(1, thread_name_prefix="extract") as extracting,
        ThreadPoolExecutor(1, thread_name_prefix="embed") as embedding,
    ):
        started: list[Future[object]] = []

        def start(batch: B) -> tuple[B, Future[X], Future[V]]:
            # within the caller's trace: each batch's stages are the ingest's spans
            ext = extracting.submit(tracing.carry(extract), batch)
            vec = embedding.submit(tracing.carry(embed), batch, ext)
            started.extend((ext, vec))  # type: ignore[arg-type]
            return batch, ext, vec

        ahead: tuple[B, Future[X], Future[V]] | None = start(first)
        i = 0
        try:
            while ahead is not None:
                batch, ext, vec = ahead
                after = next(it, None)
                ahead = start(after) if after is not None else None
                write(i, batch, ext.result(), vec.result())
                i += 1
        except BaseException:
            for f in started:
                f.cancel()
            raise
