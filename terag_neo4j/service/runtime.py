"""What one service process holds: one `TeragClient` (driver and models loaded once), the
bounded thread pool retrieval runs in, and the admission that turns excess load into 429/503.

Retrieval is synchronous and CPU-bound (embedding, Neo4j round trips, GDS calls), so it runs in
threads; the event loop only waits. Admission counts requests running or waiting for a thread:
past `max_concurrency + max_queue` a request is refused at once (429), and one that waited
`queue_timeout_s` for a thread gets 503, both with Retry-After, so load never turns into a hang.
With several keys (`shared`), each key (principal) may hold at most half the threads and half
the queue besides, so one key flooding the service leaves the other keys threads to run on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from terag_neo4j.errors import TeragError
from terag_neo4j.service.auth import CALLER
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.settings import ServiceSettings

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.config import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")
CLOSE_WAIT_S = 2.0  # for calls still running at shutdown, after the requests' grace


class Admission:
    """At most `running` calls in threads, `waiting` more queued; the rest refused. When
    `shared`, one caller holds at most `share_running` threads and `share_limit` requests in
    all: its excess waits on its own semaphore, not in the line every caller stands in."""

    def __init__(self, running: int, waiting: int, timeout_s: float, shared: bool = False) -> None:
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
        self.pool = ThreadPoolExecutor(max_workers=running, thread_name_prefix="terag-query")

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
        if self.pending >= self.limit:
            raise self._busy(429, f"busy: {self.pending} requests running or queued; retry later")
        held = self._held.get(who, 0)
        if held >= self.share_limit:
            raise self._busy(
                429,
                f"busy: this key has {held} requests running or queued (this key's limit: "
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
                fut = asyncio.get_running_loop().run_in_executor(self.pool, fn)
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


class Runtime:
    """The client, built in the background (Neo4j may still be starting) and warmed once."""

    def __init__(
        self,
        service: ServiceSettings,
        settings: Settings | None = None,
        client: TeragClient | None = None,
        shared: bool = False,
    ) -> None:
        self.service = service
        self.settings = settings
        self.admission = Admission(
            service.max_concurrency, service.max_queue, service.queue_timeout_s, shared
        )
        self._client = client
        self._owns_client = client is None
        self.warm = False
        self.startup_error: str | None = None
        self.started = time.time()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ start-up

    def start(self) -> None:
        self._thread = threading.Thread(target=self._build, name="terag-startup", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        delay = 1.0
        while not self._stop.is_set():
            try:
                if self._client is None:
                    from terag_neo4j.client import TeragClient

                    self._client = TeragClient(self.settings)
                self._warm_up(self._client)
                self.warm = True
                self.startup_error = None
                log.info("ready: models loaded, Neo4j at %s", self._client.store.uri)
                return
            except TeragError as e:  # Neo4j not up yet, a model missing: say so on /v1/ready
                self.startup_error = str(e)
                log.warning("not ready yet: %s (retrying in %.0f s)", e, delay)
            except Exception as e:
                self.startup_error = f"{type(e).__name__}: {e}"
                log.exception("start-up failed; retrying in %.0f s", delay)
            self._stop.wait(delay)
            delay = min(delay * 2, 30.0)

    @staticmethod
    def _warm_up(client: TeragClient) -> None:
        """Load what the first query would, so it does not pay for it (nor race to build it)."""
        client.embedder.embed(["warm-up"])
        _ = client.extractor
        _ = client.retriever

    def wait_ready(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end and not self.warm:
            time.sleep(0.05)
        return self.warm

    # ------------------------------------------------------------------ use

    @property
    def client(self) -> TeragClient:
        if not self.warm or self._client is None:
            why = f": {self.startup_error}" if self.startup_error else ""
            raise ServiceError(503, f"starting: not ready yet{why}", headers={"Retry-After": "5"})
        return self._client

    async def call(self, fn: Callable[[TeragClient], T]) -> T:
        """`fn(client)` in a worker thread, under admission, counted against the caller's key."""
        client = self.client
        who = CALLER.get()
        return await self.admission.run(lambda: fn(client), who.name if who else "")

    def probe(self) -> dict[str, Any]:
        """Neo4j and GDS answering now (a short read), for /v1/ready."""
        client = self.client
        rows = client.store.read("gds_version")
        return {"gds": str(rows[0]["version"]) if rows else None}

    def close(self) -> None:
        self._stop.set()
        self.admission.close()
        if self._client is not None and self._owns_client:
            # Requests had their grace (app.SHUTDOWN_GRACE_S) before this: a call still
            # running now waits on a Neo4j that does not answer, and is not waited for again
            self._client.close(wait_s=CLOSE_WAIT_S)
