"""Parsing of the streamed ask's lines into `TeragRemote.answer_stream`'s events (hand-written
lines; the lines a real service sends are read in tests/service/test_stream_clients.py)."""

from __future__ import annotations

import json

import pytest

from terag_neo4j.service.remote_stream import (
    RemoteError,
    StreamedAnswer,
    StreamedPassages,
    StreamedText,
    stream_event,
)

PASSAGE = {"id": "beetle::0", "doc_id": "beetle", "title": "Beetle", "text": "...", "score": 0.4}
RETRIEVAL = {
    "query": "q",
    "namespace": "ns",
    "entities": [],
    "matches": [],
    "passages": [PASSAGE],
    "mode": "pagerank",
    "score_kind": "pagerank_mass",
}


def test_passages_text_and_done_lines() -> None:
    first = stream_event(json.dumps({"event": "passages", "passages": [PASSAGE]}))
    assert isinstance(first, StreamedPassages) and first.passages[0].id == "beetle::0"
    piece = stream_event(json.dumps({"event": "token", "text": " Porsche"}))
    assert piece == StreamedText(" Porsche")
    done = {
        "event": "done",
        "answer": "Porsche [1]",
        "citations": [
            {"marker": 1, "passage_id": "beetle::0", "doc_id": "beetle", "provenance": {}}
        ],
        "uncited": [],
        "input_tokens": 10,
        "output_tokens": 3,
        "retrieval": RETRIEVAL,
    }
    last = stream_event(json.dumps(done))
    assert isinstance(last, StreamedAnswer)
    assert last.answer.passage_ids == ["beetle::0"] and last.answer.citations[0].marker == 1
    assert last.answer.output_tokens == 3


def test_the_answer_line_is_not_an_event() -> None:
    assert stream_event(json.dumps({"event": "answer", "answer": "x", "citations": []})) is None


def test_an_error_line_raises_its_status_and_type() -> None:
    line = {"event": "error", "status": 504, "error": {"type": "GatewayTimeout", "message": "m"}}
    with pytest.raises(RemoteError) as e:
        stream_event(json.dumps(line))
    assert (e.value.status, e.value.type, e.value.message) == (504, "GatewayTimeout", "m")
