"""The service's operations as MCP tools (the official `mcp` SDK's `MCPServer`).

Over streamable HTTP (mounted at /mcp in `terag serve`) each call carries the caller's key in its
HTTP headers, and every tool checks the namespace against it as the HTTP routes do; over stdio
(`terag mcp`) the caller is the local user who started the process, with the access of
`TERAG_MCP_KEY` when set (a key from TERAG_API_KEYS), else all of it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from terag_neo4j import namespace_views as views
from terag_neo4j.core.results import Mode
from terag_neo4j.errors import TeragError, one_line
from terag_neo4j.service import bounds, streaming
from terag_neo4j.service.asking import ask_deadline_s, ask_streamed, retrieval_view
from terag_neo4j.service.audit import audited
from terag_neo4j.service.auth import authenticate, authorize
from terag_neo4j.service.http_errors import ServiceError, public_message, status_for
from terag_neo4j.service.reads import as_reader
from terag_neo4j.service.schemas import Answer, TextDocument
from terag_neo4j.service.settings import Principal

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.service.jobs import JobRegistry
    from terag_neo4j.service.runtime import Runtime
    from terag_neo4j.service.settings import KeyRing

log = logging.getLogger(__name__)
T = TypeVar("T")

READY_WAIT_S = 120.0
INSTRUCTIONS = (
    "TERAG knowledge graph search over Neo4j. Call list_namespaces first, then search a "
    "namespace with a question; ask also answers it with a small local LLM."
)


def build_mcp(
    runtime: Runtime, jobs: JobRegistry, keys: KeyRing, stdio_principal: Principal | None = None
) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("terag", instructions=INSTRUCTIONS)

    def args(**given: str) -> None:
        """The HTTP routes' bounds on each argument given, checked before anything else."""
        checks: dict[str, Callable[[object], str]] = {
            "namespace": bounds.check_namespace_arg,
            "document_id": bounds.check_document_id,
            "passage_id": bounds.check_passage_id,
            "concept": bounds.check_concept,
            "job_id": bounds.check_job_id,
            "question": lambda q: bounds.check_question_arg(q, runtime.service.max_question_chars),
        }
        try:
            for name, value in given.items():
                checks[name](value)
        except ServiceError as e:
            raise refusal(e) from None

    def principal(ctx: Context[Any, Any]) -> Principal:
        headers = ctx.headers
        if headers is None:  # stdio: the process's own user
            if stdio_principal is None:
                raise Refusal(403, "Forbidden: no access configured for this transport")
            return stdio_principal
        try:
            return authenticate(keys, {k.lower(): v for k, v in headers.items()})
        except ServiceError as e:
            raise refusal(e) from None

    def scoped(ctx: Context[Any, Any], namespace: str, write: bool = False) -> Principal:
        try:
            who = principal(ctx)
            authorize(who, namespace, write)
        except ServiceError as e:
            raise refusal(e) from None
        return who

    async def ready() -> None:
        # An agent may call a tool while the models still load: wait, as a local tool would
        if not runtime.warm:
            await anyio.to_thread.run_sync(runtime.wait_ready, READY_WAIT_S)

    async def call(fn: Callable[[TeragClient], T]) -> T:
        await ready()
        try:
            return await runtime.call(fn)
        except ServiceError as e:
            raise refusal(e) from None
        except TeragError as e:
            raise refusal(e) from None

    @server.tool()
    async def list_namespaces(ctx: Context[Any, Any]) -> list[dict[str, Any]]:
        """The namespaces (corpora) you may search, with their passage and concept counts."""
        p = principal(ctx)
        infos = await call(lambda c: c.namespaces())
        return [
            {"name": i.name, "passages": i.passages, "concepts": i.concepts}
            for i in infos
            if p.can_read(i.name)
        ]

    @server.tool()
    async def search(
        namespace: str,
        question: str,
        ctx: Context[Any, Any],
        top_k: int = 5,
        mode: Mode | None = None,
        rerank: bool | None = None,
    ) -> dict[str, Any]:
        """Top passages of a namespace for a question, each with its provenance (source, pages,
        headings, character offsets), and the concepts that linked the question to it. `mode`:
        pagerank (personalised PageRank over the concept graph), flat (BM25 and vector rankings
        fused, no graph), dense (vector only) or hybrid (the walk fused with dense); default: the
        service's preset. `rerank`: false skips the service's reranker, true requires one."""
        args(namespace=namespace, question=question)
        who = scoped(ctx, namespace)
        k = max(1, min(int(top_k), 100))
        res = await call(
            as_reader(
                namespace,
                lambda c: c.retrieve(
                    question, top_k=k, namespace=namespace, mode=mode, rerank=rerank
                ),
                who,
            )
        )
        return retrieval_view(res).model_dump(exclude={"restart", "timings"})

    @server.tool()
    async def ask(
        namespace: str, question: str, ctx: Context[Any, Any], top_k: int = 5
    ) -> dict[str, Any]:
        """Answer a question from a namespace's passages; returns the answer, the ids of the
        passages it was read from, the citations its markers ([1], [2]) make (each with the
        passage's source, pages and headings) and its claims that cite none. Called with a
        progress token, it streams as progress notifications: first the passages' ids, then
        the answer so far each time the reader writes more."""
        args(namespace=namespace, question=question)
        who = scoped(ctx, namespace)
        k = max(1, min(int(top_k), 100))
        await ready()
        try:
            ans = await _ask_streamed_mcp(runtime, ctx, namespace, question, k, who)
        except ServiceError as e:
            raise refusal(e) from None
        except TeragError as e:
            raise refusal(e) from None
        return ans.model_dump(exclude={"retrieval"})

    @server.tool()
    async def why_retrieved(
        namespace: str, passage_id: str, question: str, ctx: Context[Any, Any], top_k: int = 5
    ) -> dict[str, Any]:
        """Why a passage was retrieved for a question: its rank and score in the top k, its
        weight as a flat-ranking seed, and the question's linked concepts that name it."""
        args(namespace=namespace, question=question, passage_id=passage_id)
        who = scoped(ctx, namespace)
        k = max(1, min(int(top_k), 100))
        w = await call(
            as_reader(namespace, lambda c: c.why(passage_id, question, namespace, k), who)
        )
        return asdict(w)

    @server.tool()
    async def add_text(
        namespace: str, document_id: str, text: str, ctx: Context[Any, Any], title: str = ""
    ) -> dict[str, Any]:
        """Add (or replace) a document in a namespace; indexing runs in the background:
        poll ingest_status with the returned job id."""
        args(namespace=namespace, document_id=document_id)
        with audited("documents.add", namespace, [document_id]) as line:
            p = scoped(ctx, namespace, write=True)
            line.key = p.name
            try:
                doc = TextDocument(id=document_id, text=text, title=title).document()
            except ValueError as e:
                raise Refusal(422, one_line(e)) from None
            job = await call(lambda c: jobs.submit(c, namespace, [doc], p))
            line.status = 202
            return job.model_dump()

    @server.tool()
    async def ingest_status(job_id: str, ctx: Context[Any, Any]) -> dict[str, Any]:
        """An ingest job's state and progress (passages done of total), errors and tokens."""
        args(job_id=job_id)
        p = principal(ctx)  # the key is checked before anything about the job is told
        job = await call(lambda c: jobs.get(c, job_id, p))
        return job.model_dump()

    @server.tool()
    async def list_documents(
        namespace: str, ctx: Context[Any, Any], offset: int = 0, limit: int = 100
    ) -> dict[str, Any]:
        """A namespace's documents with their passage counts."""
        args(namespace=namespace)
        scoped(ctx, namespace)
        lim = max(1, min(int(limit), 1000))
        page = await call(lambda c: c.documents(namespace, max(0, offset), lim))
        return {"documents": [asdict(d) for d in page.documents], "total": page.total}

    @server.tool()
    async def delete_document(
        namespace: str, document_id: str, ctx: Context[Any, Any]
    ) -> dict[str, Any]:
        """Remove a document and its passages from a namespace."""
        args(namespace=namespace, document_id=document_id)
        with audited("documents.delete", namespace, [document_id]) as line:
            line.key = scoped(ctx, namespace, write=True).name
            n = await call(lambda c: views.delete_document(c, namespace, document_id))
            return {"namespace": namespace, "document": document_id, "passages": n}

    @server.tool()
    async def concept_neighbourhood(
        namespace: str, concept: str, ctx: Context[Any, Any], depth: int = 1, max_nodes: int = 50
    ) -> dict[str, Any]:
        """A concept's neighbourhood: the passages and concepts around it, bounded by depth
        (1-3) and node count (1-500)."""
        args(namespace=namespace, concept=concept)
        who = scoped(ctx, namespace)
        d, n = max(1, min(int(depth), 3)), max(1, min(int(max_nodes), 500))
        g = await call(
            as_reader(namespace, lambda c: c.neighbourhood(concept, namespace, d, n), who)
        )
        return asdict(g)

    return server


async def _ask_streamed_mcp(
    runtime: Runtime, ctx: Context[Any, Any], namespace: str, question: str, k: int, who: Principal
) -> Answer:
    """The HTTP route's streamed ask (one admission for retrieval and reader, the same
    deadline) with its events as progress notifications. Each notification's message stands
    alone, as a client shows only the latest: the passages' ids, then the answer so far."""
    deadline_s = ask_deadline_s(runtime)
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    hand = streaming.Handoff(loop)
    task = asyncio.ensure_future(
        runtime.call(
            as_reader(namespace, lambda c: ask_streamed(c, question, k, namespace, hand), who)
        )
    )
    try:
        res = await streaming.first_item(hand, task, end, deadline_s)
        sent = 1
        await ctx.report_progress(sent, None, "passages: " + ", ".join(p.id for p in res.passages))
        text = ""
        while True:
            got = await streaming.next_item(hand, task, end)
            if got is None:
                raise streaming.too_slow(deadline_s)
            item, queued = got
            if not queued or item is None:
                break
            if item[1]:
                text += item[1]
                sent += 1
                await ctx.report_progress(sent, None, text)
        try:
            ans, _ = await asyncio.wait_for(asyncio.shield(task), max(0.0, end - loop.time()))
        except TimeoutError:
            raise streaming.too_slow(deadline_s) from None
        return ans
    finally:
        # Failed, timed out or cancelled (the client went away): the reader stops at its next
        # piece, and a call still waiting for its admission gives its place up
        hand.stop.set()
        if not task.done():
            task.cancel()
        task.add_done_callback(streaming._consume)


class Refusal(ToolError, TeragError):
    """A tool's error with the HTTP status the same call would get (for its audit line)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def refusal(e: TeragError) -> Refusal:
    """A service or project error as the tool's one-line error."""
    if isinstance(e, ServiceError):
        return Refusal(e.status, f"{e.type}: {e.message}")
    status, type_ = status_for(e)
    return Refusal(status, f"{type_}: {public_message(e)}")
