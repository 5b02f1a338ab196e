"""The NDJSON lines of a streamed ask, and the guarantee that they end.

One worker-thread call (one admission) retrieves, hands the passages over, then reads, handing
each piece of the answer over as the reader writes it. The lines are `passages`, `token`...,
`answer`, `done`; or, once the 200 is out, an `error` line as the last, whatever failed: the
call refused or failed before it read (its task ends without an end marker), the reader failing,
or the whole ask running past its deadline. A client that goes away, or a deadline that passes,
tells the thread to stop at its next piece, so it does not hold its worker slot for an answer
nobody reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncGenerator, Callable
from typing import Any, TypeVar

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from terag_neo4j.errors import TeragError
from terag_neo4j.service.http_errors import ServiceError, error_body, public_message, status_for

log = logging.getLogger(__name__)
T = TypeVar("T")

# What crosses from the worker thread to the event loop: ("passages", x) once, then
# ("token", text)..., then None when the reader has finished (or failed).
Item = tuple[str, Any] | None


class StreamStopped(TeragError):
    """The stream's reader was told to stop: its client went away or its deadline passed."""


def line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event) + "\n").encode()


def error_line(e: BaseException) -> bytes:
    """An exception as the stream's last line: the status line is gone, so the status goes in it."""
    status, type_ = status_for(e)
    if isinstance(e, ServiceError):
        status, type_ = e.status, e.type
    return line({"event": "error", "status": status, **error_body(type_, public_message(e))})


def too_slow(deadline_s: float) -> ServiceError:
    return ServiceError(
        504,
        f"the answer was not finished within {deadline_s:.0f} s (the queue wait, retrieval and "
        "the reader's TERAG_LLM_TIMEOUT_S); retry, or ask without streaming",
        type_="GatewayTimeout",
    )


class Handoff:
    """The worker thread's side: `put` an item for the event loop, refused once told to stop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.items: asyncio.Queue[Item] = asyncio.Queue()
        self.stop = threading.Event()

    def put(self, item: Item) -> None:
        if item is not None and self.stop.is_set():
            raise StreamStopped("the stream's client went away or its deadline passed")
        try:
            self.loop.call_soon_threadsafe(self.items.put_nowait, item)
        except RuntimeError:  # the loop is closed: the service is stopping, nobody reads
            self.stop.set()

    def token(self, piece: str | None) -> None:
        """The reader's `emit`: a piece of the answer, or None when it has finished."""
        self.put(None if piece is None else ("token", piece))


async def next_item(
    hand: Handoff, task: asyncio.Future[Any], end: float
) -> tuple[Item, bool] | None:
    """The next item, and whether it came from the queue: (None, False) once the task has
    ended with nothing more queued (it failed before its end marker, or finished); None when
    the deadline `end` (loop time) passed first."""
    loop = asyncio.get_running_loop()
    if not hand.items.empty():
        return hand.items.get_nowait(), True
    if task.done():
        return None, False
    getter = asyncio.ensure_future(hand.items.get())
    try:
        done, _ = await asyncio.wait(
            {getter, task}, timeout=max(0.0, end - loop.time()), return_when="FIRST_COMPLETED"
        )
    finally:
        if not getter.done():
            getter.cancel()
    if getter in done:
        return getter.result(), True
    if task in done:
        return (hand.items.get_nowait(), True) if not hand.items.empty() else (None, False)
    return None


async def first_item(
    hand: Handoff, task: asyncio.Future[Any], end: float, deadline_s: float
) -> Any:
    """Wait for the passages (the first item). A task that fails before it retrieved raises
    here, so the route answers with the error's status instead of a 200 stream; so does one
    past the deadline `end` (loop time; 504)."""
    try:
        got = await next_item(hand, task, end)
    except BaseException:  # the request was cancelled (its client went away)
        hand.stop.set()
        task.cancel()
        raise
    if got is None:
        hand.stop.set()
        task.cancel()
        raise too_slow(deadline_s)
    item, queued = got
    if queued and item is not None and item[0] == "passages":
        return item[1]
    await task  # it failed (raises), or it returned without passages, which is a bug
    raise TeragError("internal: the streamed ask ended before its passages")


async def lines(
    hand: Handoff,
    task: asyncio.Future[T],
    head: list[bytes],
    tail: Callable[[T], list[bytes]],
    end: float,
    deadline_s: float,
) -> AsyncGenerator[bytes, None]:
    """`head`, a `token` line per piece, then `tail(result)`; or an `error` line as the last,
    whatever failed (the task raising before or after its end marker, the deadline `end`).
    Closing it early (the client went away) stops the reader at its next piece."""
    try:
        for b in head:
            yield b
        while True:
            got = await next_item(hand, task, end)
            if got is None:
                hand.stop.set()
                yield error_line(too_slow(deadline_s))
                return
            item, queued = got
            if not queued or item is None:
                break
            yield line({"event": "token", "text": item[1]})
        loop = asyncio.get_running_loop()
        try:
            result = await asyncio.wait_for(asyncio.shield(task), max(0.0, end - loop.time()))
        except TimeoutError:
            hand.stop.set()
            yield error_line(too_slow(deadline_s))
            return
        except Exception as e:
            yield error_line(e)
            return
        for b in tail(result):
            yield b
    finally:
        hand.stop.set()
        if not task.done():
            # Waiting for its admission: give the place up. Running: the thread stops at its
            # next piece, and the admission frees the slot when it returns.
            task.cancel()
        task.add_done_callback(_consume)


def _consume(task: asyncio.Future[Any]) -> None:
    """Fetch a task's exception once it ends, so nobody logs it as never retrieved."""
    if not task.cancelled() and (e := task.exception()) is not None:
        log.debug("a streamed ask ended after its stream: %s", e)


class ClosingStreamingResponse(StreamingResponse):
    """A `StreamingResponse` that closes its lines when it ends, however it ends. Starlette
    stops sending when the client disconnects but leaves the generator suspended at its
    `yield` until it is garbage-collected; closing it at once runs its `finally`, which tells
    the reader to stop."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:
                await close()
