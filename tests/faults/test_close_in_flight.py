"""`close()` while other threads are retrieving, on the real Neo4j: the driver is never closed
under a running call (closing it said goodbye on connections other threads were writing to, a
`BufferError` in the driver's outbox). Each call either completes or raises the project's
one-line `ClientClosed`; a call after close raises it at once; the driver ends up closed."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from terag_neo4j.aio import AsyncTeragClient
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.store import ClientClosed
from tests.integration.conftest import SAMPLE

pytestmark = [pytest.mark.integration, pytest.mark.faults]

QUESTIONS = [
    "Which city is the headquarters of Volkswagen?",
    "Who designed the Volkswagen Beetle?",
    "Where is Porsche based?",
]
THREADS = 6


def test_close_under_running_retrievals(base_settings: Settings, namespace: str) -> None:
    with TeragClient(base_settings, namespace=namespace) as setup:
        setup.index([SAMPLE], progress=False)
    client = TeragClient(base_settings, namespace=namespace)
    assert client.retrieve(QUESTIONS[0]).passages  # models loaded, projection built
    completed = [0] * THREADS  # retrievals each thread finished
    running = [False] * THREADS  # in a retrieval now
    errors: list[BaseException | None] = [None] * THREADS
    go = threading.Barrier(THREADS + 1)

    def loop(i: int) -> None:
        go.wait()
        n = 0
        while True:
            running[i] = True
            try:
                assert client.retrieve(QUESTIONS[(i + n) % len(QUESTIONS)]).passages
            except BaseException as e:
                errors[i] = e
                return
            finally:
                running[i] = False
            completed[i] += 1
            n += 1

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(THREADS)]
    for t in threads:
        t.start()
    go.wait()
    deadline = time.monotonic() + 4 * base_settings.neo4j_timeout_s
    while sum(completed) < THREADS and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sum(completed) >= THREADS, "the threads never got going"
    time.sleep(0.2)  # every thread in the middle of a retrieval, or between two
    busy = [i for i in range(THREADS) if running[i]]
    before = list(completed)
    t0 = time.monotonic()
    client.close()
    close_s = time.monotonic() - t0
    for t in threads:
        t.join(base_settings.neo4j_timeout_s * 2)
    assert not any(t.is_alive() for t in threads), "a retrieval did not end after close()"
    # Every thread ended on the closed client, and on nothing else ...
    for e in errors:
        assert isinstance(e, ClientClosed), repr(e)
        assert "\n" not in str(e) and "closed" in str(e)
    # ... after finishing the retrieval it was in when close() came (a call that was running
    # goes on opening sessions: only new calls are refused)
    assert busy, "no thread was in a retrieval when close() came"
    for i in busy:
        assert completed[i] == before[i] + 1, f"thread {i}'s running retrieval did not finish"
    assert close_s <= base_settings.neo4j_timeout_s + 5
    assert client.store.driver._closed
    with pytest.raises(ClientClosed):
        client.retrieve(QUESTIONS[0])
    client.close()  # a second close does nothing
    print(f"\nclose() took {close_s:.2f}s with {len(busy)} retrievals running")


@pytest.mark.asyncio
async def test_aclose_under_running_retrievals(base_settings: Settings, namespace: str) -> None:
    with TeragClient(base_settings, namespace=namespace) as setup:
        setup.index([SAMPLE], progress=False)
    terag = AsyncTeragClient(base_settings, namespace=namespace, max_workers=3)
    assert (await terag.retrieve(QUESTIONS[0])).passages
    running = [asyncio.ensure_future(terag.retrieve(q)) for q in QUESTIONS * 3]
    await asyncio.sleep(0.1)
    await terag.aclose()
    outcomes = await asyncio.gather(*running, return_exceptions=True)
    for r in outcomes:
        assert not isinstance(r, BaseException) or isinstance(r, ClientClosed), repr(r)
    assert any(not isinstance(r, BaseException) for r in outcomes)
    assert terag.sync.store.driver._closed
    with pytest.raises(ClientClosed):
        await terag.retrieve(QUESTIONS[0])
