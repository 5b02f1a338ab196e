"""The ingest's batches run as three overlapped stages: while batch i is written (on the calling
thread, which holds the namespace's write pin), batch i+1 is extracted and embedded on a thread
each. spaCy (or the LLM server), the embedder and Neo4j each keep a core busy, and the write no
longer waits for the next batch's vectors, nor the vectors for the write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

B = TypeVar("B")  # a batch
X = TypeVar("X")  # its extractions
V = TypeVar("V")  # its vectors


def run_overlapped(
    batches: Sequence[B],
    extract: Callable[[B], X],
    embed: Callable[[B, Future[X]], V],
    write: Callable[[int, B, X, V], None],
) -> None:
    """For each batch in order: `extract(batch)` and `embed(batch, its extraction's future)` on
    their own threads, one batch ahead of `write(i, batch, extractions, vectors)` here. Writes
    keep the batches' order. An error (or a cancel, raised by a stage) stops the run: stages not
    begun are dropped, each running one ends its current step, and the error is raised here."""
    if not batches:
        return
    with (
        ThreadPoolExecutor(1, thread_name_prefix="extract") as extracting,
        ThreadPoolExecutor(1, thread_name_prefix="embed") as embedding,
    ):
        started: list[Future[object]] = []

        def start(i: int) -> tuple[Future[X], Future[V]]:
            ext = extracting.submit(extract, batches[i])
            vec = embedding.submit(embed, batches[i], ext)
            started.extend((ext, vec))  # type: ignore[arg-type]
            return ext, vec

        ahead = start(0)
        try:
            for i, batch in enumerate(batches):
                ext, vec = ahead
                if i + 1 < len(batches):
                    ahead = start(i + 1)
                write(i, batch, ext.result(), vec.result())
        except BaseException:
            for f in started:
                f.cancel()
            raise
