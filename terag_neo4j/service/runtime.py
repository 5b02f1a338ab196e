"""What one service process holds: one `TeragClient` (driver and models loaded once), and
the admission (`admission.py`) of the threads retrieval runs in.

Retrieval is synchronous and CPU-bound (embedding, Neo4j round trips, GDS calls), so it runs in
threads; the event loop only waits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from terag_neo4j.errors import TeragError
from terag_neo4j.service.admission import Admission
from terag_neo4j.service.auth import CALLER
from terag_neo4j.service.http_errors import ServiceError, without_addresses
from terag_neo4j.service.settings import ServiceSettings

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.config import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")
CLOSE_WAIT_S = 2.0  # for calls still running at shutdown, after the requests' grace


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
            why = f": {without_addresses(self.startup_error)}" if self.startup_error else ""
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
