"""Retrieve, ask (optionally streamed as NDJSON, passages first) and a concept's neighbourhood."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query, Request

from terag_neo4j.service import graph, streaming
from terag_neo4j.service.auth import ReadNamespace
from terag_neo4j.service.errors import ServiceError
from terag_neo4j.service.reads import as_reader
from terag_neo4j.service.routes_admin import ERRORS, runtime
from terag_neo4j.service.schemas import (
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
    from terag_neo4j.retrieval.answer import cite

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


def check_question(question: str, limit: int) -> str:
    """The one check of a question, for HTTP and MCP alike: TERAG_MAX_QUESTION_CHARS bounds it."""
    if len(question) > limit:
        raise ServiceError(422, f"question: at most {limit} characters, got {len(question):,}")
    if not question.strip():
        raise ServiceError(422, "question: empty; ask a question")
    return question


def _check_question(request: Request, question: str) -> str:
    return check_question(question, runtime(request).service.max_question_chars)


@router.post(
    "/namespaces/{namespace}/retrieve", response_model=Retrieval, tags=["query"], responses=ERRORS
)
async def retrieve(request: Request, namespace: ReadNamespace, body: RetrieveRequest) -> Retrieval:
    """Top passages for a question by personalised PageRank, with the concepts that linked the
    question to the graph and the tokens spent: the result of `TeragClient.retrieve`."""
    q = _check_question(request, body.question)
    kw: dict[str, Any] = {"mode": body.mode} if body.mode else {}
    if body.rerank is not None:
        kw["rerank"] = body.rerank
    res = await runtime(request).call(
        as_reader(namespace, lambda c: c.retrieve(q, top_k=body.top_k, namespace=namespace, **kw))
    )
    return retrieval_view(res)


def _read(c: Any, question: str, res: RetrievalResult) -> Answer:
    from terag_neo4j.retrieval.answer import read

    text, comp = read(c.llm, question, res.passages)
    return _answer(text, comp, res)


def _ask_streamed(
    c: Any, question: str, top_k: int | None, namespace: str, hand: streaming.Handoff
) -> tuple[Answer, RetrievalResult]:
    """Retrieve, hand the passages over, then read, handing each piece of the answer over as
    the reader writes it and None once it has finished: one admitted call for the whole ask,
    so nothing can refuse the reader after the stream's 200 went out."""
    from terag_neo4j.retrieval.answer import read_stream

    res = c.retrieve(question, top_k=top_k, namespace=namespace)
    hand.put(("passages", res))
    gen = read_stream(c.llm, question, res.passages)
    try:
        while True:
            try:
                hand.token(next(gen))
            except StopIteration as stop:
                text, comp = stop.value
                break
    finally:
        # Told to stop: hang up on the LLM server now, not when the generator is collected (the
        # exception's traceback keeps it alive, and the server goes on writing meanwhile)
        gen.close()
        hand.token(None)
    return _answer(text, comp, res), res


def ask_deadline_s(rt: Any) -> float:
    """How long a streamed ask may take in all: the wait for a worker, the retrieval's Neo4j
    calls, and two LLM calls (query NER, when an LLM does it, and the reader), each bounded by
    its own timeout."""
    settings = rt.client.settings
    return float(rt.service.queue_timeout_s + settings.neo4j_timeout_s + 2 * settings.llm_timeout_s)


@router.post(
    "/namespaces/{namespace}/ask",
    response_model=Answer,
    tags=["query"],
    responses={**ERRORS, 200: {"content": {"application/x-ndjson": {}}}},
)
async def ask(request: Request, namespace: ReadNamespace, body: AskRequest) -> Any:
    """Retrieve, then answer with the reader LLM. With `"stream": true` the reply is NDJSON:
    a `passages` line as soon as retrieval is done, `token` lines with the answer's characters as
    the reader writes them, then `answer`, then `done`; or `error` as the last line, whatever
    failed after the 200 (the reader, the ask's deadline)."""
    q = _check_question(request, body.question)
    rt = runtime(request)
    if not body.stream:
        # One admission for both: a reader refused after its retrieval would waste that
        return await rt.call(
            as_reader(
                namespace,
                lambda c: _read(c, q, c.retrieve(q, top_k=body.top_k, namespace=namespace)),
            )
        )

    deadline_s = ask_deadline_s(rt)
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    hand = streaming.Handoff(loop)
    task = asyncio.ensure_future(
        rt.call(as_reader(namespace, lambda c: _ask_streamed(c, q, body.top_k, namespace, hand)))
    )
    # Retrieval errors (unknown namespace, Neo4j down, a refused admission) still get their
    # status, not a 200 stream
    res = await streaming.first_item(hand, task, end, deadline_s)
    view = retrieval_view(res)
    head = [
        streaming.line({"event": "passages", "passages": [p.model_dump() for p in view.passages]})
    ]

    def tail(result: tuple[Answer, RetrievalResult]) -> list[bytes]:
        ans = result[0]
        cited = {
            "citations": [c.model_dump() for c in ans.citations],
            "uncited": ans.uncited,
        }
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
        return [
            streaming.line({"event": "answer", "answer": ans.answer, **cited}),
            streaming.line(done),
        ]

    return streaming.ClosingStreamingResponse(
        streaming.lines(hand, task, head, tail, end, deadline_s),
        media_type="application/x-ndjson",
    )


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
    question: Annotated[str, Query(min_length=1)],
    top_k: Annotated[int, Query(ge=1, le=100)] = 5,
) -> WhyRetrieved:
    """Why a passage was (or was not) retrieved for a question: its rank and score in the top
    k, its weight as a flat-ranking seed, and the question's linked concepts that name it."""
    q = _check_question(request, question)
    return await runtime(request).call(
        as_reader(namespace, lambda c: why(c, namespace, passage_id, q, top_k))
    )


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
        as_reader(namespace, lambda c: graph.neighbourhood(c, namespace, concept, depth, max_nodes))
    )
