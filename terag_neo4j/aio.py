"""asyncio front end of `TeragClient`.

    >>> import asyncio
    >>> from terag_neo4j.aio import AsyncTeragClient
    >>> async def main() -> None:                                       # doctest: +SKIP
    ...     async with AsyncTeragClient(namespace="demo", extractor="spacy") as terag:
    ...         await terag.index(["docs/"])
    ...         results = await asyncio.gather(*(terag.retrieve(q) for q in questions))

Every method runs the synchronous client in a worker thread (`asyncio.to_thread`). That is a
deliberate choice, not a stopgap: one retrieval is query NER (spaCy or an LLM call), a sentence
embedding (CPU) and a handful of sequential Cypher/GDS round trips whose PageRank runs inside
Neo4j. The neo4j async driver would make none of that faster; what an async caller needs is that
the event loop stays free and that independent queries overlap, which threads give (the Neo4j
driver, the embedder and the caches are thread-safe; the Neo4j driver pool and `max_workers` bound
the concurrency).
"""

from __future__ import annotations

import asyncio
import functools
import threading
import warnings
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from terag_neo4j.client import Source, TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import InputError, OnProgress
from terag_neo4j.core.results import (
    AnswerResult,
    DocumentPage,
    Mode,
    Neighbourhood,
    RetrievalResult,
    WhyRetrieved,
)
from terag_neo4j.indexing.namespace_import import ImportReport
from terag_neo4j.indexing.pipeline import IngestReport
from terag_neo4j.store import ClientClosed, NamespaceInfo

if TYPE_CHECKING:
    from langchain_core.documents import Document as LCDocument
    from langchain_core.language_models import BaseChatModel
    from neo4j import Driver

    from terag_neo4j.llm import LLM

T = TypeVar("T")

__all__ = ["AsyncTeragClient"]


class _InFlight:
    """The calls handed to worker threads that have not finished: `wait` returns once there are
    none. A call counts from the moment it is submitted, so one that is queued behind others in
    the executor is waited for too; one cancelled before a thread took it never runs."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._count = 0

    async def run(
        self, call: Callable[[], T], submit: Callable[[Callable[[], T]], Awaitable[T]]
    ) -> T:
        started = dropped = False
        with self._cond:
            self._count += 1

        def job() -> T:
            nonlocal started
            with self._cond:
                if dropped:  # its caller gave up before a thread took it
                    raise asyncio.CancelledError
                started = True
            try:
                return call()
            finally:
                self._finish()

        try:
            return await submit(job)
        except BaseException:
            with self._cond:
                if not started:  # never ran (cancelled in the queue, or not submitted)
                    dropped = True
                    self._count -= 1
                    self._cond.notify_all()
            raise

    def _finish(self) -> None:
        with self._cond:
            self._count -= 1
            self._cond.notify_all()

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once none is running; False when `timeout_s` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._count == 0, timeout_s)


class AsyncTeragClient:
    """`TeragClient` for asyncio code: the same arguments, awaitable methods.

    `max_workers` bounds how many calls run at once (default: the event loop's default executor,
    as `asyncio.to_thread` uses). Wrap an existing client with `AsyncTeragClient.wrap(client)`;
    a wrapped client is not closed by `aclose()`. `driver=` hands in your own `neo4j.Driver`,
    which stays yours to close (see `TeragClient`). `llm=` hands in a LangChain chat model for
    extraction, query NER and answers (see `TeragClient`).
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        max_workers: int | None = None,
        driver: Driver | None = None,
        llm: BaseChatModel | LLM | None = None,
        **overrides: Any,
    ) -> None:
        self._sync = TeragClient(settings, driver=driver, llm=llm, **overrides)
        self._owns_client = True
        self._executor = ThreadPoolExecutor(max_workers, "terag") if max_workers else None
        self._warm = False
        self._in_flight = _InFlight()
        self._closed = False

    @classmethod
    def wrap(cls, client: TeragClient, *, max_workers: int | None = None) -> AsyncTeragClient:
        self = cls.__new__(cls)
        self._sync = client
        self._owns_client = False
        self._executor = ThreadPoolExecutor(max_workers, "terag") if max_workers else None
        self._warm = False
        self._in_flight = _InFlight()
        self._closed = False
        return self

    @property
    def sync(self) -> TeragClient:
        """The underlying synchronous client (settings, ledger, store)."""
        return self._sync

    @property
    def settings(self) -> Settings:
        return self._sync.settings

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await self._in_thread(functools.partial(self._call, fn, *args, **kwargs))

    async def _in_thread(self, call: Callable[[], T]) -> T:
        """`call()` in a worker thread, counted until it returns (see `aclose`)."""
        if self._closed:
            raise ClientClosed("this AsyncTeragClient was closed; make a new one")
        executor = self._executor

        async def submit(job: Callable[[], T]) -> T:
            if executor is None:
                return await asyncio.to_thread(job)
            return await asyncio.get_running_loop().run_in_executor(executor, job)

        return await self._in_flight.run(call, submit)

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        # The models are loaded before the first call (once: the client builds its parts under
        # a lock), so a retrieval's timings never include them.
        if not self._warm:
            _ = self._sync.retriever
            self._warm = True
        return fn(*args, **kwargs)

    async def index(
        self,
        source: Source | LCDocument | Iterable[Source | LCDocument],
        namespace: str | None = None,
        progress: bool = False,
        errors: list[str] | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        prune: bool = False,
        should_stop: Callable[[], bool] | None = None,
        on_progress: OnProgress | None = None,
    ) -> IngestReport:
        """Index files/folders, `Document`s or LangChain documents (see `TeragClient.index`); no
        progress bar by default. `should_stop` and `on_progress` are called from the worker
        thread."""
        return await self._run(
            self._sync.index,
            source,
            namespace,
            progress,
            errors,
            include,
            exclude,
            prune,
            should_stop=should_stop,
            on_progress=on_progress,
        )

    async def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        namespace: str | None = None,
        entities: Sequence[str] | None = None,
        run_id: str = "query",
        mode: Mode | None = None,
        rerank: bool | None = None,
    ) -> RetrievalResult:
        """See `TeragClient.retrieve`."""
        return await self._run(
            self._sync.retrieve,
            query,
            top_k,
            namespace,
            entities=entities,
            run_id=run_id,
            mode=mode,
            rerank=rerank,
        )

    async def answer(
        self, query: str, top_k: int | None = None, namespace: str | None = None
    ) -> AnswerResult:
        return await self._run(self._sync.answer, query, top_k, namespace)

    async def stats(self, namespace: str | None = None) -> NamespaceInfo:
        return await self._in_thread(functools.partial(self._sync.stats, namespace))

    async def namespaces(self) -> list[NamespaceInfo]:
        return await self._in_thread(functools.partial(self._sync.namespaces))

    @overload
    async def delete(self, document: str | Path, namespace: str | None = None) -> int: ...

    @overload  # the name it had before it matched `TeragClient.delete`: deprecated
    async def delete(self, *, document_id: str, namespace: str | None = None) -> int: ...

    async def delete(
        self,
        document: str | Path | None = None,
        namespace: str | None = None,
        *,
        document_id: str | None = None,
    ) -> int:
        """Remove a document, named by its id or by the path `index` read it from; returns how
        many passages went (see `TeragClient.delete`)."""
        if document_id is not None:
            warnings.warn(
                "AsyncTeragClient.delete(document_id=...) is deprecated: use "
                "delete(document=...), as TeragClient.delete",
                DeprecationWarning,
                stacklevel=2,
            )
            document = document if document is not None else document_id
        if document is None:
            raise InputError("delete() needs the document: its id, or the path it was read from")
        return await self._in_thread(functools.partial(self._sync.delete, document, namespace))

    async def drop(self, namespace: str | None = None) -> None:
        await self._run(self._sync.drop, namespace)

    async def export_namespace(self, path: str | Path, namespace: str | None = None) -> Path:
        """See `TeragClient.export_namespace`."""
        return await self._in_thread(
            functools.partial(self._sync.export_namespace, path, namespace)
        )

    async def import_namespace(
        self, path: str | Path, namespace: str | None = None
    ) -> ImportReport:
        """See `TeragClient.import_namespace`."""
        return await self._in_thread(
            functools.partial(self._sync.import_namespace, path, namespace)
        )

    async def documents(
        self, namespace: str | None = None, offset: int = 0, limit: int = 100
    ) -> DocumentPage:
        """See `TeragClient.documents`."""
        return await self._in_thread(
            functools.partial(self._sync.documents, namespace, offset, limit)
        )

    async def why(
        self, passage_id: str, question: str, namespace: str | None = None, top_k: int = 5
    ) -> WhyRetrieved:
        """See `TeragClient.why` (it retrieves, so it waits for the models as `retrieve` does)."""
        return await self._run(self._sync.why, passage_id, question, namespace, top_k)

    async def neighbourhood(
        self, concept: str, namespace: str | None = None, depth: int = 1, max_nodes: int = 50
    ) -> Neighbourhood:
        """See `TeragClient.neighbourhood`."""
        return await self._in_thread(
            functools.partial(self._sync.neighbourhood, concept, namespace, depth, max_nodes)
        )

    async def aclose(self) -> None:
        """Refuse new calls (`ClientClosed`), wait for the running ones (up to
        TERAG_NEO4J_TIMEOUT_S), then close the client (unless it was wrapped). Calls in the
        event loop's default executor are waited for too. The driver is never closed under one:
        a call still running after the wait closes it as it returns (see `TeragClient.close`)."""
        if self._closed:
            return
        self._closed = True
        if not self._in_flight.wait(0):
            await asyncio.to_thread(self._in_flight.wait, self._sync.settings.neo4j_timeout_s)
        if self._executor is not None:
            self._executor.shutdown(wait=False)  # queued calls still run: into ClientClosed
        if self._owns_client:
            await asyncio.to_thread(self._sync.close)

    async def __aenter__(self) -> AsyncTeragClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
