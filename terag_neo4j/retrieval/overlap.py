"""Stages of a query that need nothing from each other, run at the same time.

Embedding the question is the one stage that needs no database: it runs on a worker thread
while the calling thread links the question to concepts and runs the full-text half of the flat
ranking, which need only the words. The database calls stay on the calling thread: the store's
read-only mode and a client's in-flight hold are per thread (`GraphStore.reads_only`,
`InFlight`), and a worker would escape both.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from terag_neo4j import tracing

T = TypeVar("T")

# Threads are made as queries need them; one per query running at once.
_POOL_SIZE = 32
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_POOL_SIZE, thread_name_prefix="terag-overlap")
        return _pool


class Background(Generic[T]):
    """`fn()` computed once: on a worker thread from now when `start` is set, else on the
    first call, in the caller's thread. A call waits for the value (or raises its error);
    `elapsed` is how long `fn` itself took."""

    def __init__(self, fn: Callable[[], T], start: bool) -> None:
        self._fn = fn
        self.elapsed = 0.0
        self._future: Future[T] | None = (
            # within the caller's trace: the worker's spans are the question's
            _executor().submit(tracing.carry(self._timed)) if start else None
        )
        self._lock = threading.Lock()
        self._done = False
        self._value: T

    def _timed(self) -> T:
        t = time.perf_counter()
        try:
            return self._fn()
        finally:
            self.elapsed = time.perf_counter() - t

    def __call__(self) -> T:
        if self._future is not None:
            return self._future.result()
        with self._lock:
            if not self._done:
                self._value = self._timed()
                self._done = True
            return self._value
