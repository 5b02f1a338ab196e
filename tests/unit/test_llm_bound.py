"""TERAG_LLM_CONCURRENCY is one bound per process: the `Bounded` of every backend object made
with the same limit shares one semaphore, which sync calls in threads and async calls in any
event loop all wait on. No LLM: the calls are sleeps that count how many run at once."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from terag_neo4j.config import Settings
from terag_neo4j.llm.interface import Bounded


class InFlight:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.done = 0

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1
            self.done += 1


def test_threads_and_two_event_loops_of_two_backends_share_one_bound() -> None:
    settings = Settings(llm_concurrency=3)
    a, b = Bounded(settings), Bounded(settings)  # two backend objects of one process
    seen = InFlight()

    def sync_call(bound: Bounded) -> None:
        with bound.semaphore:
            seen.enter()
            time.sleep(0.05)
            seen.leave()

    async def async_call(bound: Bounded) -> None:
        async with bound.slot():
            seen.enter()
            await asyncio.sleep(0.05)
            seen.leave()

    async def many(bound: Bounded) -> None:
        await asyncio.gather(*(async_call(bound) for _ in range(4)))

    threads = [threading.Thread(target=sync_call, args=(x,)) for x in (a, b, a, b)]
    threads += [threading.Thread(target=asyncio.run, args=(many(x),)) for x in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert seen.done == 12
    assert seen.most == 3  # the limit is reached, never passed
    assert a.semaphore is b.semaphore
    assert Bounded(Settings(llm_concurrency=1)).semaphore is not a.semaphore


def test_a_cancelled_waiter_holds_nothing() -> None:
    bound = Bounded(Settings(llm_concurrency=5))

    async def scenario() -> bool:
        slots = [bound.slot() for _ in range(5)]
        for s in slots:
            await s.__aenter__()
        waiter = asyncio.create_task(_enter(bound))
        await asyncio.sleep(0.05)
        waiter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiter
        for s in slots:
            await s.__aexit__(None, None, None)
        # every slot is free again: five can be held at once
        got = [bound.semaphore.acquire(blocking=False) for _ in range(5)]
        for _ in got:
            bound.semaphore.release()
        return all(got)

    assert asyncio.run(scenario())


async def _enter(bound: Bounded) -> None:
    async with bound.slot():
        await asyncio.sleep(10)
