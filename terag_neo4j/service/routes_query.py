"""Retrieve, ask (optionally streamed as NDJSON, passages first) and a concept's neighbourhood."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from terag_neo4j.service import graph
from terag_neo4j.service.auth import ReadNamespace
from terag_neo4j.service.errors import ServiceError, error_body, public_message, status_for
from terag_neo4j.service.routes_admin import ERRORS, runtime
from terag_neo4j.service.schemas import (
    QUESTION_MAX,
    Answer,
    AskRequest,
    Citation,
    Graph,
    Retrieval,
    RetrieveRequest,
    WhyConcept,
    WhyRetrieved,
)

if TYPE_CHECKING:
    from terag_neo4j.results import RetrievalResult

router = APIRouter(prefix="/v1")


def retrieval_view(res: RetrievalResult) -> Retrieval:
    """A `RetrievalResult` as `terag retrieve --json` prints it."""
    d = asdict(res)
    d["score_kind"] = res.score_kind
    return Retrieval.model_validate(d)


def _answer(text: str, comp: Any, res: RetrievalResult) -> Answer:
    """The reader's answer with the passages its markers name (`reader.cite`)."""
    from terag_neo4j.retrieval.reader import cite

    cited, uncited = cite(text, res.passages)
    return Answer(
        answer=text,
        passage_ids=[p.id for p in res.passages],
        citations=[Citation.model_validate(asdict(c)) for c in cited],
        uncited=uncited,
        retrieval=retrieval_view(res),
        input_tokens=comp.input_tokens,
        output_tokens=comp.output_tokens,
    )


def _check_question(request: Request, question: str) -> str:
    limit = runtime(request).service.max_question_chars
    if len(question) > limit:
        raise ServiceError(422, f"question: at most {limit} characters, got {len(question):,}")
    if not question.strip():
        raise ServiceError(422, "question: empty; ask a question")
    return question


@router.post(
    "/namespaces/{namespace}/retrieve", response_model=Retrieval, tags=["query"], responses=ERRORS
)
async def retrieve(request: Request, namespace: ReadNamespace, body: RetrieveRequest) -> Retrieval:
    """Top passages for a question by personalised PageRank, with the concepts that linked the
    question to the graph and the tokens spent: the result of `TeragClient.retrieve`."""
    q = _check_question(request, body.question)
    kw: dict[str, Any] = {"mode": body.mode} if body.mode else {}
    res = await runtime(request).call(
        lambda c: c.retrieve(q, top_k=body.top_k, namespace=namespace, **kw)
    )
    return retrieval_view(res)


def _read(c: Any, question: str, res: RetrievalResult) -> Answer:
    from terag_neo4j.retrieval.reader import read

    text, comp = read(c.llm, question, res.passages)
    return _answer(text, comp, res)


def _read_streamed(
    c: Any, question: str, res: RetrievalResult, emit: Callable[[str | None], None]
) -> Answer:
    """`_read`, handing each piece of the answer to `emit` as the reader writes it."""
    from terag_neo4j.retrieval.reader import read_stream

    try:
        gen = read_stream(c.llm, question, res.passages)
        while True:
            try:
                emit(next(gen))
            except StopIteration as stop:
                text, comp = stop.value
                break
    finally:
        emit(None)
    return _answer(text, comp, res)


@router.post(
    "/namespaces/{namespace}/ask",
    response_model=Answer,
    tags=["query"],
    responses={**ERRORS, 200: {"content": {"application/x-ndjson": {}}}},
)
async def ask(request: Request, namespace: ReadNamespace, body: AskRequest) -> Any:
    """Retrieve, then answer with the reader LLM. With `"stream": true` the reply is NDJSON:
    a `passages` line as soon as retrieval is done, `token` lines with the answer's characters as
    the reader writes them, then `answer`, then `done` (or `error`)."""
    q = _check_question(request, body.question)
    rt = runtime(request)
    if not body.stream:
        res = await rt.call(lambda c: c.retrieve(q, top_k=body.top_k, namespace=namespace))
        return await rt.call(lambda c: _read(c, q, res))

    # Retrieval errors (unknown namespace, Neo4j down) still get their status, not a 200 stream
    res = await rt.call(lambda c: c.retrieve(q, top_k=body.top_k, namespace=namespace))

    async def lines() -> AsyncIterator[bytes]:
        view = retrieval_view(res)
        first = {"event": "passages", "passages": [p.model_dump() for p in view.passages]}
        yield (json.dumps(first) + "\n").encode()
        # The reader runs in a worker thread; its pieces cross to this loop through a queue,
        # None marking the end (also after an error, which the task then raises)
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[str | None] = asyncio.Queue()

        def emit(piece: str | None) -> None:
            loop.call_soon_threadsafe(pieces.put_nowait, piece)

        task = asyncio.ensure_future(rt.call(lambda c: _read_streamed(c, q, res, emit)))
        while (piece := await pieces.get()) is not None:
            yield (json.dumps({"event": "token", "text": piece}) + "\n").encode()
        try:
            ans = await task
        except Exception as e:  # the status line is gone: the error is the stream's last line
            status, type_ = status_for(e)
            if isinstance(e, ServiceError):
                status, type_ = e.status, e.type
            yield (
                json.dumps(
                    {"event": "error", "status": status, **error_body(type_, public_message(e))}
                )
                + "\n"
            ).encode()
            return
        cited = {
            "citations": [c.model_dump() for c in ans.citations],
            "uncited": ans.uncited,
        }
        yield (json.dumps({"event": "answer", "answer": ans.answer, **cited}) + "\n").encode()
        done = {
            "event": "done",
            "answer": ans.answer,
            **cited,
            # The token lines are the characters of the answer's JSON value, before its
            # whitespace is collapsed into `answer`
            "streamed": "answer_value",
            "input_tokens": ans.input_tokens,
            "output_tokens": ans.output_tokens,
            "retrieval": view.model_dump(),
        }
        yield (json.dumps(done) + "\n").encode()

    return StreamingResponse(lines(), media_type="application/x-ndjson")


def why(c: Any, namespace: str, passage_id: str, question: str, top_k: int) -> WhyRetrieved:
    """Run the retrieval as the retrieve route does, then explain one passage: its rank, its
    seed weight in the restart vector, and the linked concepts that point at it."""
    res = c.retrieve(question, top_k=top_k, namespace=namespace)
    by_node = {m.node: m for m in res.matches if m.node >= 0}
    rows = c.store.read("why_passage", namespace=namespace, passage=passage_id, nodes=list(by_node))
    if not rows:
        raise ServiceError(404, f"no passage {passage_id!r} in namespace {namespace!r}")
    node = int(rows[0]["node"])
    rank = next((i for i, p in enumerate(res.passages, 1) if p.id == passage_id), None)
    # The restart vector holds concept seeds and passage seeds; a passage's own node id can
    # only be there as a flat-ranking seed
    seed = sum(float(w) for n, w in res.restart if int(n) == node)
    linked = [by_node[n] for n in rows[0]["linked"] if n in by_node]
    linked.sort(key=lambda m: (-m.weight, m.name))
    return WhyRetrieved(
        namespace=namespace,
        passage_id=passage_id,
        question=question,
        top_k=top_k,
        rank=rank,
        score=res.passages[rank - 1].score if rank else None,
        score_kind=res.score_kind,
        seed_weight=seed,
        concepts=[
            WhyConcept(name=m.name, weight=m.weight, frequency=m.frequency, match=m.match)
            for m in linked
        ],
    )


@router.get(
    "/namespaces/{namespace}/passages/{passage_id:path}/why",
    response_model=WhyRetrieved,
    tags=["query"],
    responses=ERRORS,
)
async def why_retrieved(
    request: Request,
    namespace: ReadNamespace,
    passage_id: str,
    question: Annotated[str, Query(min_length=1, max_length=QUESTION_MAX)],
    top_k: Annotated[int, Query(ge=1, le=100)] = 5,
) -> WhyRetrieved:
    """Why a passage was (or was not) retrieved for a question: its rank and score in the top
    k, its weight as a flat-ranking seed, and the question's linked concepts that name it."""
    q = _check_question(request, question)
    return await runtime(request).call(lambda c: why(c, namespace, passage_id, q, top_k))


@router.get("/namespaces/{namespace}/graph", response_model=Graph, tags=["graph"], responses=ERRORS)
async def concept_graph(
    request: Request,
    namespace: ReadNamespace,
    concept: Annotated[str, Query(min_length=1, max_length=200, examples=["Ferdinand Porsche"])],
    depth: Annotated[int, Query(ge=1, le=3)] = 1,
    max_nodes: Annotated[int, Query(ge=1, le=500)] = 50,
) -> Graph:
    """A concept's neighbourhood (concepts and passages, the walk's edges), bounded by depth and
    node count; `truncated` says whether the bound cut it."""
    return await runtime(request).call(
        lambda c: graph.neighbourhood(c, namespace, concept, depth, max_nodes)
    )
