"""Concurrent first calls build a client's parts once, and `AsyncTeragClient.aclose` waits for
the calls still running before it closes the driver (the real Neo4j, the real models)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest

from terag_neo4j.aio import AsyncTeragClient
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings

from .conftest import SAMPLE

pytestmark = pytest.mark.integration
T = TypeVar("T")
QUESTION = "Which city is the headquarters of Volkswagen?"


def all_at_once(get: Callable[[], T], n: int = 4) -> list[T]:
    """`get()` from `n` threads released together."""
    start = threading.Barrier(n)

    def one() -> T:
        start.wait()
        return get()

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(lambda _: one(), range(n)))


def test_concurrent_first_calls_build_one_embedder_and_one_retriever(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace) as client:
        embedders = all_at_once(lambda: client.embedder)
        # One object (so one SQLite connection, which `close` closes), not one per thread.
        assert len({id(e) for e in embedders}) == 1 and embedders[0] is client.embedder
    with TeragClient(base_settings, namespace=namespace) as client:
        retrievers = all_at_once(lambda: client.retriever)
        assert len({id(r) for r in retrievers}) == 1 and retrievers[0] is client.retriever
        assert retrievers[0].embedder is client.embedder


@pytest.mark.asyncio
async def test_aclose_waits_for_calls_running_in_the_default_executor(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace) as setup:
        setup.index([SAMPLE], progress=False)
    terag = AsyncTeragClient(base_settings, namespace=namespace)  # no max_workers: to_thread
    # The first call loads the models for seconds: aclose comes while it runs.
    running = asyncio.ensure_future(terag.retrieve(QUESTION))
    await asyncio.sleep(0.05)
    await terag.aclose()
    assert running.done(), "aclose returned before the call it was closed under"
    result = running.result()  # not an error from a driver closed under it
    assert result.passages
    assert terag.sync.store.driver._closed
