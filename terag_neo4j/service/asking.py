"""What the HTTP routes and the MCP tools share of a question: its one check, the retrieval and
the answer as the wire shows them, and the streamed ask (retrieval, then the reader's pieces)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from terag_neo4j import tracing
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.schemas import Answer, Citation, Retrieval

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.core.results import RetrievalResult
    from terag_neo4j.llm.ledger import Completion
    from terag_neo4j.service.runtime import Runtime
    from terag_neo4j.service.streaming import Handoff


def retrieval_view(res: RetrievalResult) -> Retrieval:
    """A `RetrievalResult` as `terag retrieve --json` prints it, read from its attributes
    (`score_kind` is a property) rather than from an `asdict` copy of every restart pair."""
    return Retrieval.model_validate(res, from_attributes=True)


def answer_view(text: str, comp: Completion, res: RetrievalResult) -> Answer:
    """The reader's answer with the passages its markers name (`reader.cite`)."""
    from terag_neo4j.retrieval.answer import cite

    cited, uncited = cite(text, res.passages)
    return Answer(
        answer=text,
        passage_ids=[p.id for p in res.passages],
        citations=[Citation.model_validate(c, from_attributes=True) for c in cited],
        uncited=uncited,
        retrieval=retrieval_view(res),
        input_tokens=comp.input_tokens,
        output_tokens=comp.output_tokens,
        cut=comp.cut,
    )


def check_question(question: str, limit: int) -> str:
    """The one check of a question, for HTTP and MCP alike: TERAG_MAX_QUESTION_CHARS bounds it."""
    if len(question) > limit:
        raise ServiceError(422, f"question: at most {limit} characters, got {len(question):,}")
    if not question.strip():
        raise ServiceError(422, "question: empty; ask a question")
    return question


def read_answer(c: TeragClient, question: str, res: RetrievalResult) -> Answer:
    """The reader's answer to `question` from the passages of `res`."""
    from terag_neo4j.retrieval.answer import read

    text, comp = read(c.llm, question, res.passages)
    return answer_view(text, comp, res)


def ask_streamed(
    c: TeragClient, question: str, top_k: int | None, namespace: str, hand: Handoff
) -> tuple[Answer, RetrievalResult]:
    """Retrieve, hand the passages over, then read, handing each piece of the answer over as
    the reader writes it and None once it has finished: one admitted call for the whole ask,
    so nothing can refuse the reader after the stream's 200 went out."""
    from terag_neo4j.retrieval.answer import read_stream

    res = c.retrieve(question, top_k=top_k, namespace=namespace)
    hand.put(("passages", res))
    gen = read_stream(c.llm, question, res.passages)
    try:
        with tracing.stage("reader"):
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
    return answer_view(text, comp, res), res


def ask_deadline_s(rt: Runtime) -> float:
    """How long a streamed ask may take in all: the wait for a worker, the retrieval's Neo4j
    calls, and two LLM calls (query NER, when an LLM does it, and the reader), each bounded by
    its own timeout."""
    settings = rt.client.settings
    return float(rt.service.queue_timeout_s + settings.neo4j_timeout_s + 2 * settings.llm_timeout_s)
