"""What `AsyncTeragClient.aclose` waits for (no services): every call handed to a worker thread
until it returns, a call whose awaiting task was cancelled while its thread runs included, and
never a call that was cancelled before a thread took it (it does not run at all)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from terag_neo4j.aio import _InFlight

pytestmark = pytest.mark.asyncio


async def test_wait_covers_running_and_drops_queued_cancelled_calls() -> None:
    in_flight = _InFlight()
    pool = ThreadPoolExecutor(1)  # one thread: the second call queues behind the first
    release, running = threading.Event(), threading.Event()
    ran: list[str] = []

    def slow() -> str:
        running.set()
        release.wait(10)
        ran.append("slow")
        return "slow"

    def queued() -> str:
        ran.append("queued")
        return "queued"

    def submit(job: Callable[[], str]) -> asyncio.Future[str]:
        return asyncio.get_running_loop().run_in_executor(pool, job)

    first = asyncio.ensure_future(in_flight.run(slow, submit))
    second = asyncio.ensure_future(in_flight.run(queued, submit))
    assert await asyncio.to_thread(running.wait, 5)
    first.cancel()  # its thread goes on: still waited for
    second.cancel()  # still in the queue: never runs, not waited for
    await asyncio.sleep(0.05)
    waiter = asyncio.ensure_future(asyncio.to_thread(in_flight.wait))
    await asyncio.sleep(0.1)
    assert not waiter.done(), "wait returned while a call was still running"
    release.set()
    await asyncio.wait_for(waiter, 5)
    assert ran == ["slow"]
    pool.shutdown(wait=True)
