"""The streamed reader's incremental parse of `{"answer": ...}` (no service, no Ollama)."""

from __future__ import annotations

import json

import pytest

from terag_neo4j.retrieval.answer import AnswerStream, parse_answer


@pytest.mark.parametrize(
    "answer", ["Ferdinand Porsche", 'say "yes"', "caf\u00e9 \\ back", "tab\there", ""]
)
@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_pieces_give_the_answer_value(answer: str, size: int) -> None:
    raw = json.dumps({"answer": answer}, ensure_ascii=True)
    parser = AnswerStream()
    out = "".join(parser.feed(raw[i : i + size]) for i in range(0, len(raw), size))
    assert out == answer
    assert parse_answer(raw) == " ".join(out.split())


def test_a_reply_without_the_field_streams_nothing() -> None:
    parser = AnswerStream()
    assert parser.feed("Ferdinand ") == "" and parser.feed("Porsche") == ""
