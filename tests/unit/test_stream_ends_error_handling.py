"""Error handling of the streamed ask's lines (no services: the admitted call is a coroutine of
the test's): every stream that has sent its 200 ends with `done` or `error`, whatever fails, and
a client that goes away, or a deadline that passes, tells the worker thread to stop."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from terag_neo4j.service import streaming
from terag_neo4j.service.http_errors import ServiceError

pytestmark = pytest.mark.asyncio

HEAD = [streaming.line({"event": "passages", "passages": []})]


def tail(result: str) -> list[bytes]:
    return [streaming.line({"event": "done", "answer": result})]


async def in_thread(work: Callable[[], str]) -> str:
    return await asyncio.get_running_loop().run_in_executor(None, work)


async def collect(
    hand: streaming.Handoff, task: asyncio.Future[str], deadline_s: float = 10
) -> list[dict[str, Any]]:
    end = asyncio.get_running_loop().time() + deadline_s
    out = [json.loads(b) async for b in streaming.lines(hand, task, HEAD, tail, end, deadline_s)]
    return out


async def test_a_call_refused_before_the_reader_ends_with_an_error_line() -> None:
    hand = streaming.Handoff(asyncio.get_running_loop())

    async def refused() -> str:  # what an admission that is full raises
        await asyncio.sleep(0.05)
        raise ServiceError(429, "busy: retry later")

    task = asyncio.ensure_future(refused())
    t = time.monotonic()
    out = await asyncio.wait_for(collect(hand, task), 5)
    assert time.monotonic() - t < 2
    assert [x["event"] for x in out] == ["passages", "error"]
    assert out[-1]["status"] == 429 and out[-1]["error"]["type"] == "TooManyRequests"


async def test_a_reader_failing_midway_keeps_its_tokens_and_ends_with_error() -> None:
    hand = streaming.Handoff(asyncio.get_running_loop())

    def work() -> str:
        try:
            hand.token("Fer")
            raise RuntimeError("Ollama went away")
        finally:
            hand.token(None)

    out = await asyncio.wait_for(collect(hand, asyncio.ensure_future(in_thread(work))), 5)
    assert [x["event"] for x in out] == ["passages", "token", "error"]
    assert out[1]["text"] == "Fer" and out[-1]["status"] == 500


async def test_a_task_that_fails_without_its_end_marker_still_ends_the_stream() -> None:
    hand = streaming.Handoff(asyncio.get_running_loop())

    def work() -> str:
        hand.token("a")
        raise ServiceError(503, "overloaded: no worker free in time; retry later")

    out = await asyncio.wait_for(collect(hand, asyncio.ensure_future(in_thread(work))), 5)
    assert [x["event"] for x in out] == ["passages", "token", "error"]
    assert out[-1]["status"] == 503


async def test_a_finished_reader_ends_with_done() -> None:
    hand = streaming.Handoff(asyncio.get_running_loop())

    def work() -> str:
        for piece in ("Ferdinand", " Porsche"):
            hand.token(piece)
        hand.token(None)
        return "Ferdinand Porsche"

    out = await asyncio.wait_for(collect(hand, asyncio.ensure_future(in_thread(work))), 5)
    assert [x["event"] for x in out] == ["passages", "token", "token", "done"]
    assert out[-1]["answer"] == "Ferdinand Porsche"


async def test_a_deadline_ends_the_stream_and_stops_the_reader() -> None:
    hand = streaming.Handoff(asyncio.get_running_loop())
    stopped = threading.Event()

    def work() -> str:  # a reader that writes slowly for ever
        try:
            while True:
                hand.token("x")
                time.sleep(0.05)
        except streaming.StreamStopped:
            stopped.set()
            raise

    t = time.monotonic()
    task = asyncio.ensure_future(in_thread(work))
    out = await asyncio.wait_for(collect(hand, task, deadline_s=0.5), 5)
    assert time.monotonic() - t < 3
    assert out[-1]["event"] == "error" and out[-1]["status"] == 504
    assert await asyncio.to_thread(stopped.wait, 5), "the reader went on after the deadline"


async def test_a_client_that_goes_away_stops_the_reader() -> None:
    hand = streaming.Handoff(asyncio.get_running_loop())
    stopped = threading.Event()

    def work() -> str:
        try:
            while True:
                hand.token("x")
                time.sleep(0.05)
        except streaming.StreamStopped:
            stopped.set()
            raise

    task = asyncio.ensure_future(in_thread(work))
    end = asyncio.get_running_loop().time() + 30
    gen = streaming.lines(hand, task, HEAD, tail, end, 30)
    assert json.loads(await gen.__anext__())["event"] == "passages"
    assert json.loads(await gen.__anext__())["event"] == "token"
    await gen.aclose()  # what the server does when the client disconnects
    assert await asyncio.to_thread(stopped.wait, 5), "the reader went on for a gone client"
    # Cancelled (the admitted call's wait is given up; the thread ends on its own)
    with pytest.raises((streaming.StreamStopped, asyncio.CancelledError)):
        await task


async def test_a_retrieval_that_fails_raises_before_any_line() -> None:
    hand = streaming.Handoff(asyncio.get_running_loop())

    async def refused() -> str:
        raise ServiceError(429, "busy: retry later")

    task = asyncio.ensure_future(refused())
    end = asyncio.get_running_loop().time() + 5
    with pytest.raises(ServiceError) as e:
        await streaming.first_item(hand, task, end, 5)
    assert e.value.status == 429


async def test_first_item_is_the_passages() -> None:
    hand = streaming.Handoff(asyncio.get_running_loop())

    def work() -> str:
        hand.put(("passages", ["p1"]))
        hand.token(None)
        return "done"

    task = asyncio.ensure_future(in_thread(work))
    end = asyncio.get_running_loop().time() + 5
    assert await streaming.first_item(hand, task, end, 5) == ["p1"]
    assert await task == "done"
