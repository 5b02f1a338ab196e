"""AsyncTeragClient against the real Neo4j + GDS with the spaCy extractor."""

from __future__ import annotations

import asyncio
import time

import pytest

from terag_neo4j.aio import AsyncTeragClient
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.store import NamespaceNotFound

from .conftest import SAMPLE

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

QUESTIONS = [
    "Where are the headquarters of the company that makes the Beetle?",
    "Ferdinand Porsche and Stuttgart",
    "Which state is Wolfsburg in?",
    "Where is the Volkswagen plant in Mexico?",
]


async def test_index_stats_retrieve_concurrently(base_settings: Settings, namespace: str) -> None:
    async with AsyncTeragClient(base_settings, namespace=namespace) as terag:
        report = await terag.index([SAMPLE])
        info = await terag.stats()
        assert info.name == namespace and info.passages == 8 and info.concepts > 8
        assert report.to_record()  # an IngestReport came back, not a coroutine or future

        # The event loop stays free while retrievals run in threads: a ticker keeps ticking.
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        tick_task = asyncio.create_task(ticker())
        t = time.perf_counter()
        results = await asyncio.gather(*(terag.retrieve(q, top_k=3) for q in QUESTIONS))
        elapsed = time.perf_counter() - t
        stop.set()
        await tick_task
        assert ticks >= 5, f"event loop blocked: {ticks} ticks in {elapsed:.2f}s"

        # Concurrent answers equal sequential ones from the same sync client.
        for q, res in zip(QUESTIONS, results, strict=True):
            assert res.query == q and res.namespace == namespace and len(res.passages) == 3
            again = terag.sync.retrieve(q, top_k=3)
            assert [p.id for p in res.passages] == [p.id for p in again.passages]
        assert any(p.id.endswith("beetle.md") for p in results[0].passages)

        assert await terag.delete(SAMPLE / "beetle.md") == 1  # the path it was indexed from
        assert (await terag.stats()).passages == 7
        assert namespace in {n.name for n in await terag.namespaces()}
        await terag.drop()
        with pytest.raises(NamespaceNotFound):
            await terag.stats()


async def test_errors_surface_as_exceptions(base_settings: Settings) -> None:
    async with AsyncTeragClient(base_settings, namespace="no-such-namespace-xyz") as terag:
        with pytest.raises(NamespaceNotFound):
            await terag.retrieve("anything")


async def test_wrap_leaves_the_client_open_and_bounds_workers(spacy_client: TeragClient) -> None:
    spacy_client.index([SAMPLE], progress=False)
    terag = AsyncTeragClient.wrap(spacy_client, max_workers=2)
    results = await asyncio.gather(*(terag.retrieve(q, top_k=2) for q in QUESTIONS))
    assert all(len(r.passages) == 2 for r in results)
    await terag.aclose()
    # Still usable: aclose() of a wrapper closes only its own thread pool.
    assert spacy_client.retrieve(QUESTIONS[0], top_k=1).passages
