"""Admission to a bounded pool of threads, so that load never turns into a hang.

Past `running + waiting` calls a request is refused at once (429), and one that waited
`timeout_s` for a thread gets 503, both with Retry-After. With several keys (`shared`), each
key (principal) may hold at most half the threads and half the queue besides, so one key
flooding the service leaves the other keys threads to run on. Retrievals (`runtime.py`) and
uploaded files' reads (`parsing.py`) each have one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from terag_neo4j import tracing
from terag_neo4j.service.http_errors import ServiceError

T = TypeVar("T")
A = TypeVar("A")


async def _nothing() -> None:
    return None


class Admission:
    """At most `running` calls in threads, `waiting` more queued; the rest refused. When
    `shared`, one caller holds at most `share_running` threads and `share_limit` requests in
    all: its excess waits on its own semaphore, not in the line every caller stands in."""

    def __init__(
        self,
        running: int,
        waiting: int,
        timeout_s: float,
        shared: bool = False,
        what: str = "requests",
        threads: str = "terag-query",
    ) -> None:
        self.what = what
        self.running = running
        self.limit = running + waiting
        self.timeout_s = timeout_s
        self.share_running = max(1, running // 2) if shared else running
        self.share_limit = self.share_running + (waiting // 2 if shared else waiting)
        self.pending = 0
        self.refused = 0
        self._held: dict[str, int] = {}  # requests running or queued, per caller
        self._sem: asyncio.Semaphore | None = None
        # One per caller ever seen: bounded by the configured keys
        self._own: dict[str, asyncio.Semaphore] = {}
        self.pool = ThreadPoolExecutor(max_workers=running, thread_name_prefix=threads)

    def _semaphore(self) -> asyncio.Semaphore:
        if self._sem is None:  # made on the serving loop, not where the app was built
            self._sem = asyncio.Semaphore(self.running)
        return self._sem

    def _busy(self, status: int, message: str) -> ServiceError:
        self.refused += 1
        retry = max(1, round(self.timeout_s / 10))
        return ServiceError(status, message, headers={"Retry-After": str(retry)})

    async def run(self, fn: Callable[[], T], who: str = "") -> T:
        """`fn()` in a worker thread once a slot is free, for caller `who` (a key's name)."""
        return await self.run_after(_nothing, lambda _: fn(), who)

    async def run_after(
        self, prepare: Callable[[], Awaitable[A]], fn: Callable[[A], T], who: str = ""
    ) -> T:
        """`fn(await prepare())` once a slot is free: `prepare` runs on the loop holding the
        slot (reading a request's body, so bodies beyond the slots are never read into memory),
        then `fn` in a worker thread."""
        if self.pending >= self.limit:
            raise self._busy(
                429, f"busy: {self.pending} {self.what} running or queued; retry later"
            )
        held = self._held.get(who, 0)
        if held >= self.share_limit:
            raise self._busy(
                429,
                f"busy: this key has {held} {self.what} running or queued (this key's limit: "
                f"{self.share_running} concurrent, {self.share_limit} in all); retry later",
            )
        self.pending += 1
        self._held[who] = held + 1
        try:
            own = self._own.setdefault(who, asyncio.Semaphore(self.share_running))
            sem = self._semaphore()
            got: list[asyncio.Semaphore] = []
            try:
                async with asyncio.timeout(self.timeout_s):
                    await own.acquire()
                    got.append(own)
                    await sem.acquire()
                    got.append(sem)
                arg = await prepare()
                # within the request's trace
                work = tracing.carry(fn)
                fut = asyncio.get_running_loop().run_in_executor(self.pool, work, arg)
            except BaseException as e:
                for s in got:
                    s.release()
                if isinstance(e, TimeoutError):
                    raise self._busy(
                        503, "overloaded: no worker free in time; retry later"
                    ) from None
                raise

            # The slots are freed when the thread finishes, not when a client gives up waiting:
            # a disconnect must not let more threads run than admitted.
            def free(_: object) -> None:
                sem.release()
                own.release()

            fut.add_done_callback(free)
            return await asyncio.shield(fut)
        finally:
            self.pending -= 1
            self._held[who] -= 1

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
