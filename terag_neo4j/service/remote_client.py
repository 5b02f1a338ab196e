"""`TeragRemote`: `TeragClient`'s surface over a running `terag serve`, sync and async.

Imports httpx and pydantic only (no torch, no Neo4j driver), so an application can query the
service from a small environment:

    >>> from terag_neo4j.service.remote_client import TeragRemote
    >>> with TeragRemote("http://127.0.0.1:8000", api_key="...") as terag:  # doctest: +SKIP
    ...     job = terag.index_texts([{"id": "a", "text": "..."}], namespace="wiki", wait=True)
    ...     print(terag.retrieve("Who designed the Beetle?", namespace="wiki").passages[0].id)

`answer_stream` yields the answer as the reader writes it: `StreamedPassages` first, then
`StreamedText` pieces, then `StreamedAnswer` (what `answer` returns).

Errors come back as `RemoteError` with the service's status, type and message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Self, TypeVar

import httpx
from pydantic import TypeAdapter

from terag_neo4j.core.results import DocumentPage, Neighbourhood, WhyRetrieved
from terag_neo4j.service.paths import document_path, job_path, namespace_path, why_path
from terag_neo4j.service.plain_http import warn_if_plain
from terag_neo4j.service.remote_archives import AsyncArchives, SyncArchives
from terag_neo4j.service.remote_stream import (
    AskEvent,
    RemoteError,
    StreamedAnswer,
    StreamedPassages,
    StreamedText,
    incomplete,
    stream_event,
)
from terag_neo4j.service.remote_stream import raise_for as _raise_for
from terag_neo4j.service.schemas import (
    Answer,
    AskRequest,
    Deleted,
    Job,
    Model,
    Namespace,
    NamespaceCreate,
    NamespaceStats,
    Retrieval,
    RetrieveRequest,
)

__all__ = [
    "AskEvent",
    "AsyncTeragRemote",
    "RemoteError",
    "StreamedAnswer",
    "StreamedPassages",
    "StreamedText",
    "TeragRemote",
]

TextInput = Mapping[str, Any]
FINISHED = ("succeeded", "failed", "cancelled")
T = TypeVar("T")


# Built on first use, as the models are (`Model`): a CLI call through the service uses one
_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _as(cls: type[T], data: Any) -> T:
    """The library's own result type, as `TeragClient` returns it, from the service's JSON."""
    adapter = _ADAPTERS.get(cls) or _ADAPTERS.setdefault(cls, TypeAdapter(cls))
    result: T = adapter.validate_python(data)
    return result


def _body(model: type[Model], **fields: Any) -> dict[str, Any]:
    """A request's JSON as its schema names the fields, without the ones left None (the
    service's defaults), and unvalidated: the service answers a bad value with its own 422."""
    given = {k: v for k, v in fields.items() if v is not None}
    return model.model_construct(**given).model_dump(mode="json", exclude_unset=True)


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _verify(url: str) -> bool:
    """Whether to build TLS verification: only for https. A plain-http client never negotiates
    TLS (it follows no redirects), and loading the CA bundle would cost each CLI call ~0.1 s."""
    return url.lower().startswith("https:")


class _Paths:
    def __init__(self, namespace: str) -> None:
        self.namespace = namespace

    def ns(self, namespace: str | None, tail: str = "") -> str:
        return namespace_path(namespace or self.namespace, tail)

    def doc(self, namespace: str | None, document: str) -> str:
        return document_path(namespace or self.namespace, document)

    def why_of(self, namespace: str | None, passage: str) -> str:
        return why_path(namespace or self.namespace, passage)


class TeragRemote(SyncArchives, _Paths):
    """A synchronous client of the service (one HTTP connection pool)."""

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        namespace: str = "default",
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(namespace)
        warn_if_plain(url, api_key)
        self.http = httpx.Client(
            base_url=url,
            headers=_headers(api_key),
            timeout=timeout,
            transport=transport,
            verify=_verify(url),
        )

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        r = self.http.request(method, path, **kw)
        _raise_for(r)
        return r.json() if r.content else None

    def retrieve(
        self,
        query: str,
        top_k: int | None = 5,
        namespace: str | None = None,
        mode: str | None = None,
        rerank: bool | None = None,
    ) -> Retrieval:
        body = _body(RetrieveRequest, question=query, top_k=top_k, mode=mode or None, rerank=rerank)
        return Retrieval.model_validate(
            self._call("POST", self.ns(namespace, "/retrieve"), json=body)
        )

    def answer(self, query: str, top_k: int | None = 5, namespace: str | None = None) -> Answer:
        body = _body(AskRequest, question=query, top_k=top_k)
        return Answer.model_validate(self._call("POST", self.ns(namespace, "/ask"), json=body))

    def answer_stream(
        self, query: str, top_k: int | None = 5, namespace: str | None = None
    ) -> Iterator[AskEvent]:
        """`answer`, streamed: the passages as soon as retrieval is done, the answer's text as
        the reader writes it, then the whole answer. An error after the first event raises
        `RemoteError` where it happens; leaving the loop early hangs up, which stops the reader."""
        body = _body(AskRequest, question=query, top_k=top_k, stream=True)
        with self.http.stream("POST", self.ns(namespace, "/ask"), json=body) as r:
            if r.status_code >= 400:
                r.read()
                _raise_for(r)
            for raw in r.iter_lines():
                event = stream_event(raw) if raw.strip() else None
                if event is not None:
                    yield event
                    if isinstance(event, StreamedAnswer):
                        return
        raise incomplete()

    def index_texts(
        self,
        documents: Sequence[TextInput],
        namespace: str | None = None,
        wait: bool = False,
        timeout: float = 600.0,
    ) -> Job:
        """Add documents ({"id", "text", "title"?, ...: see `TextDocument`}); `wait` polls the
        job until it ends."""
        body = {"documents": [dict(d) for d in documents]}
        job = Job.model_validate(self._call("POST", self.ns(namespace, "/documents"), json=body))
        return self.wait(job.id, timeout) if wait else job

    def job(self, job_id: str) -> Job:
        return Job.model_validate(self._call("GET", job_path(job_id)))

    def cancel(self, job_id: str) -> Job:
        return Job.model_validate(self._call("DELETE", job_path(job_id)))

    def wait(self, job_id: str, timeout: float = 600.0) -> Job:
        end = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if job.state in FINISHED or time.monotonic() > end:
                return job
            time.sleep(0.2)

    def documents(
        self, namespace: str | None = None, offset: int = 0, limit: int = 100
    ) -> DocumentPage:
        params = {"offset": offset, "limit": limit}
        data = self._call("GET", self.ns(namespace, "/documents"), params=params)
        return _as(DocumentPage, data)

    def delete(self, document: str, namespace: str | None = None) -> int:
        data = self._call("DELETE", self.doc(namespace, document))
        return Deleted.model_validate(data).passages

    def why(
        self, passage_id: str, question: str, namespace: str | None = None, top_k: int = 5
    ) -> WhyRetrieved:
        """Why a passage was (or was not) retrieved for a question (its rank, seed weight and
        the linked concepts that name it)."""
        params = {"question": question, "top_k": top_k}
        data = self._call("GET", self.why_of(namespace, passage_id), params=params)
        return _as(WhyRetrieved, data)

    def namespaces(self) -> list[Namespace]:
        return [Namespace.model_validate(x) for x in self._call("GET", "/v1/namespaces")]

    def stats(self, namespace: str | None = None) -> NamespaceStats:
        return NamespaceStats.model_validate(self._call("GET", self.ns(namespace)))

    def create(self, namespace: str | None = None) -> Namespace:
        body = _body(NamespaceCreate, name=namespace or self.namespace)
        return Namespace.model_validate(self._call("POST", "/v1/namespaces", json=body))

    def drop(self, namespace: str | None = None) -> None:
        self._call("DELETE", self.ns(namespace))

    def neighbourhood(
        self, concept: str, namespace: str | None = None, depth: int = 1, max_nodes: int = 50
    ) -> Neighbourhood:
        """A concept's neighbourhood, bounded by depth and node count."""
        params = {"concept": concept, "depth": depth, "max_nodes": max_nodes}
        return _as(Neighbourhood, self._call("GET", self.ns(namespace, "/graph"), params=params))

    graph = neighbourhood  # its name before it matched `TeragClient.neighbourhood`

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncTeragRemote(AsyncArchives, _Paths):
    """The asynchronous twin of `TeragRemote` (httpx.AsyncClient)."""

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        namespace: str = "default",
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(namespace)
        warn_if_plain(url, api_key)
        self.http = httpx.AsyncClient(
            base_url=url, headers=_headers(api_key), timeout=timeout, transport=transport
        )

    async def _call(self, method: str, path: str, **kw: Any) -> Any:
        r = await self.http.request(method, path, **kw)
        _raise_for(r)
        return r.json() if r.content else None

    async def retrieve(
        self,
        query: str,
        top_k: int | None = 5,
        namespace: str | None = None,
        mode: str | None = None,
        rerank: bool | None = None,
    ) -> Retrieval:
        body = _body(RetrieveRequest, question=query, top_k=top_k, mode=mode or None, rerank=rerank)
        data = await self._call("POST", self.ns(namespace, "/retrieve"), json=body)
        return Retrieval.model_validate(data)

    async def answer(
        self, query: str, top_k: int | None = 5, namespace: str | None = None
    ) -> Answer:
        body = _body(AskRequest, question=query, top_k=top_k)
        return Answer.model_validate(
            await self._call("POST", self.ns(namespace, "/ask"), json=body)
        )

    async def answer_stream(
        self, query: str, top_k: int | None = 5, namespace: str | None = None
    ) -> AsyncIterator[AskEvent]:
        """`TeragRemote.answer_stream`, asynchronously."""
        body = _body(AskRequest, question=query, top_k=top_k, stream=True)
        async with self.http.stream("POST", self.ns(namespace, "/ask"), json=body) as r:
            if r.status_code >= 400:
                await r.aread()
                _raise_for(r)
            async for raw in r.aiter_lines():
                event = stream_event(raw) if raw.strip() else None
                if event is not None:
                    yield event
                    if isinstance(event, StreamedAnswer):
                        return
        raise incomplete()

    async def index_texts(
        self,
        documents: Sequence[TextInput],
        namespace: str | None = None,
        wait: bool = False,
        timeout: float = 600.0,
    ) -> Job:
        body = {"documents": [dict(d) for d in documents]}
        data = await self._call("POST", self.ns(namespace, "/documents"), json=body)
        job = Job.model_validate(data)
        return await self.wait(job.id, timeout) if wait else job

    async def job(self, job_id: str) -> Job:
        return Job.model_validate(await self._call("GET", job_path(job_id)))

    async def wait(self, job_id: str, timeout: float = 600.0) -> Job:
        end = time.monotonic() + timeout
        while True:
            job = await self.job(job_id)
            if job.state in FINISHED or time.monotonic() > end:
                return job
            await asyncio.sleep(0.2)

    async def delete(self, document: str, namespace: str | None = None) -> int:
        data = await self._call("DELETE", self.doc(namespace, document))
        return Deleted.model_validate(data).passages

    async def documents(
        self, namespace: str | None = None, offset: int = 0, limit: int = 100
    ) -> DocumentPage:
        params = {"offset": offset, "limit": limit}
        data = await self._call("GET", self.ns(namespace, "/documents"), params=params)
        return _as(DocumentPage, data)

    async def why(
        self, passage_id: str, question: str, namespace: str | None = None, top_k: int = 5
    ) -> WhyRetrieved:
        params = {"question": question, "top_k": top_k}
        data = await self._call("GET", self.why_of(namespace, passage_id), params=params)
        return _as(WhyRetrieved, data)

    async def namespaces(self) -> list[Namespace]:
        return [Namespace.model_validate(x) for x in await self._call("GET", "/v1/namespaces")]

    async def stats(self, namespace: str | None = None) -> NamespaceStats:
        return NamespaceStats.model_validate(await self._call("GET", self.ns(namespace)))

    async def create(self, namespace: str | None = None) -> Namespace:
        body = _body(NamespaceCreate, name=namespace or self.namespace)
        return Namespace.model_validate(await self._call("POST", "/v1/namespaces", json=body))

    async def drop(self, namespace: str | None = None) -> None:
        await self._call("DELETE", self.ns(namespace))

    async def cancel(self, job_id: str) -> Job:
        return Job.model_validate(await self._call("DELETE", job_path(job_id)))

    async def neighbourhood(
        self, concept: str, namespace: str | None = None, depth: int = 1, max_nodes: int = 50
    ) -> Neighbourhood:
        params = {"concept": concept, "depth": depth, "max_nodes": max_nodes}
        data = await self._call("GET", self.ns(namespace, "/graph"), params=params)
        return _as(Neighbourhood, data)

    graph = neighbourhood

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
