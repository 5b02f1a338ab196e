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
    done: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    go = threading.Barrier(THREADS + 1)

    def loop(i: int) -> None:
        go.wait()
        n = 0
        while True:
            try:
                assert client.retrieve(QUESTIONS[(i + n) % len(QUESTIONS)]).passages
                n += 1
            except BaseException as e:
                with lock:
                    errors.append(e)
                    done.append(n)
                return

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(THREADS)]
    for t in threads:
        t.start()
    go.wait()
    time.sleep(1.5)  # every thread in the middle of a retrieval, or between two
    t0 = time.monotonic()
    client.close()
    close_s = time.monotonic() - t0
    for t in threads:
        t.join(base_settings.neo4j_timeout_s * 2)
    assert not any(t.is_alive() for t in threads), "a retrieval did not end after close()"
    # Every thread ended on the closed client, and on nothing else
    assert len(errors) == THREADS
    for e in errors:
        assert isinstance(e, ClientClosed), repr(e)
        assert "\n" not in str(e) and "closed" in str(e)
    assert sum(done) > 0, "no retrieval completed while the threads ran"
    assert close_s <= base_settings.neo4j_timeout_s + 5
    assert client.store.driver._closed
    with pytest.raises(ClientClosed):
        client.retrieve(QUESTIONS[0])
    client.close()  # a second close does nothing
    print(f"\nclose() took {close_s:.2f}s; retrievals completed before it: {sum(done)}")


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
