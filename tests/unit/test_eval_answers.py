"""The cached, resumable reader of `terag bench --answers`, on a fake Ollama transport (no LLM)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from terag_bench.answers import AnswerCache, CachedReader, answer_methods
from terag_bench.datasets import Question

from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.llm import OllamaLLM
from terag_neo4j.retrieval.retriever import READER_MAX_TOKENS

DOCS = {
    "p1": Document("p1", "The Seine flows through Paris.", "Seine"),
    "p2": Document("p2", "Berlin is the capital of Germany.", "Berlin"),
    "p3": Document("p3", "The Elbe reaches the North Sea.", "Elbe"),
}
QUESTIONS = [
    Question("q1", "Which river flows through Paris?", ("Seine",), ("p1",)),
    Question("q2", "What is the capital of Germany?", ("Berlin",), ("p2",)),
]
RETRIEVED = {
    "good": [["p1", "p3"], ["p2", "p3"]],
    "bad": [["p3"], ["p3"]],
}


class FakeReaderTransport(httpx.BaseTransport):
    """A fake Ollama that answers with the title of the first passage in the prompt."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, object]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        user = body["messages"][-1]["content"]
        title = user.split("[1] ", 1)[1].split("\n", 1)[0]
        return httpx.Response(
            200,
            json={
                "model": body["model"],
                "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": f" {title}\n"},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 40,
                "eval_count": 2,
            },
        )


def reader(tmp_path: Path, transport: FakeReaderTransport, model: str = "m") -> CachedReader:
    settings = Settings().model_copy(update={"llm_model": model, "llm_retries": 1})
    return CachedReader(OllamaLLM(settings, transport=transport), AnswerCache(tmp_path / "a.db"))


def test_every_method_is_scored_and_a_rerun_is_served_from_the_cache(tmp_path: Path) -> None:
    transport = FakeReaderTransport()
    first = answer_methods(reader(tmp_path, transport), QUESTIONS, RETRIEVED, DOCS)
    assert first["methods"]["good"]["em"] == 1.0
    assert first["methods"]["bad"]["em"] == 0.0
    assert first["methods"]["good"]["tokens"]["input_per_query"] == 40.0
    assert (first["calls_fresh"], first["calls_cached"], first["complete"]) == (4, 0, True)
    assert all(b["options"]["num_predict"] == READER_MAX_TOKENS for b in transport.bodies)

    again = answer_methods(reader(tmp_path, transport), QUESTIONS, RETRIEVED, DOCS)
    assert len(transport.bodies) == 4  # nothing sent twice
    assert (again["calls_fresh"], again["calls_cached"]) == (0, 4)
    assert again["methods"]["good"]["em"] == 1.0
    assert again["methods"]["good"]["tokens"]["input"] == 80  # the paid tokens are kept


def test_another_model_or_passage_order_is_a_different_prompt(tmp_path: Path) -> None:
    transport = FakeReaderTransport()
    answer_methods(reader(tmp_path, transport), QUESTIONS, RETRIEVED, DOCS)
    answer_methods(reader(tmp_path, transport, model="other"), QUESTIONS, RETRIEVED, DOCS)
    assert len(transport.bodies) == 8
    swapped = {"good": [["p3", "p1"], ["p2", "p3"]]}
    res = answer_methods(reader(tmp_path, transport), QUESTIONS, swapped, DOCS)
    assert (res["calls_fresh"], res["calls_cached"]) == (1, 1)
    assert res["methods"]["good"]["per_question"][0]["prediction"] == "Elbe"


def test_a_spent_budget_stops_between_questions_and_the_next_run_resumes(tmp_path: Path) -> None:
    transport = FakeReaderTransport()
    cut = answer_methods(reader(tmp_path, transport), QUESTIONS, RETRIEVED, DOCS, budget_s=0.0)
    assert (cut["questions_answered"], cut["complete"], cut["stopped_by_budget"]) == (
        0,
        False,
        True,
    )
    assert transport.bodies == []
    one = answer_methods(reader(tmp_path, transport), QUESTIONS[:1], RETRIEVED, DOCS)
    assert one["methods"]["bad"]["questions"] == 1
    # A spent budget still reports what the cache holds, without a new call.
    replay = answer_methods(reader(tmp_path, transport), QUESTIONS, RETRIEVED, DOCS, budget_s=0.0)
    assert (replay["questions_answered"], replay["calls_fresh"], len(transport.bodies)) == (1, 0, 2)
    full = answer_methods(reader(tmp_path, transport), QUESTIONS, RETRIEVED, DOCS)
    assert (full["calls_cached"], full["calls_fresh"]) == (2, 2)
