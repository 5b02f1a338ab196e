"""Retrieve, and ask (optionally streamed as NDJSON, passages first)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter

from terag_neo4j.service import streaming
from terag_neo4j.service.asking import (
    ask_deadline_s,
    ask_streamed,
    check_question,
    read_answer,
    retrieval_view,
)
from terag_neo4j.service.auth import ReadNamespace
from terag_neo4j.service.deps import ERRORS, RuntimeDep
from terag_neo4j.service.reads import as_reader
from terag_neo4j.service.schemas import Answer, AskRequest, Retrieval, RetrieveRequest

if TYPE_CHECKING:
    from terag_neo4j.core.results import RetrievalResult

router = APIRouter(prefix="/v1")


@router.post(
    "/namespaces/{namespace}/retrieve", response_model=Retrieval, tags=["query"], responses=ERRORS
)
async def retrieve(rt: RuntimeDep, namespace: ReadNamespace, body: RetrieveRequest) -> Retrieval:
    """Top passages for a question by personalised PageRank, with the concepts that linked the
    question to the graph and the tokens spent: the result of `TeragClient.retrieve`."""
    q = check_question(body.question, rt.service.max_question_chars)
    kw: dict[str, Any] = {"mode": body.mode} if body.mode else {}
    if body.rerank is not None:
        kw["rerank"] = body.rerank
    res = await rt.call(
        as_reader(namespace, lambda c: c.retrieve(q, top_k=body.top_k, namespace=namespace, **kw))
    )
    return retrieval_view(res)


@router.post(
    "/namespaces/{namespace}/ask",
    response_model=Answer,
    tags=["query"],
    responses={**ERRORS, 200: {"content": {"application/x-ndjson": {}}}},
)
async def ask(rt: RuntimeDep, namespace: ReadNamespace, body: AskRequest) -> Any:
    """Retrieve, then answer with the reader LLM. With `"stream": true` the reply is NDJSON:
    a `passages` line as soon as retrieval is done, `token` lines with the answer's characters as
    the reader writes them, then `answer`, then `done`; or `error` as the last line, whatever
    failed after the 200 (the reader, the ask's deadline)."""
    q = check_question(body.question, rt.service.max_question_chars)
    if not body.stream:
        # One admission for both: a reader refused after its retrieval would waste that
        return await rt.call(
            as_reader(
                namespace,
                lambda c: read_answer(c, q, c.retrieve(q, top_k=body.top_k, namespace=namespace)),
            )
        )

    deadline_s = ask_deadline_s(rt)
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    hand = streaming.Handoff(loop)
    task = asyncio.ensure_future(
        rt.call(as_reader(namespace, lambda c: ask_streamed(c, q, body.top_k, namespace, hand)))
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
        cited = {"citations": [c.model_dump() for c in ans.citations], "uncited": ans.uncited}
        done = {
            "event": "done",
            "answer": ans.answer,
            **cited,
            # The token lines are the characters of the answer's JSON value, before its
            # whitespace is collapsed into `answer`
            "streamed": "answer_value",
            "input_tokens": ans.input_tokens,
            "output_tokens": ans.output_tokens,
            "cut": ans.cut,
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
