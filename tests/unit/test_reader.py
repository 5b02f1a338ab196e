"""The reader's reply parsing and the score metadata of results (pure functions, no server).

The reader against a real Ollama is tested in tests/integration/test_demo.py.
"""

from __future__ import annotations

import json

import pytest

from terag_neo4j.cli import to_jsonable
from terag_neo4j.core.results import AnswerResult, RetrievalResult, RetrievedPassage
from terag_neo4j.retrieval.answer import READER_FORMAT, parse_answer, reader_format


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ('{"answer": "Ferdinand Porsche "}', "Ferdinand Porsche"),
        ('{"answer": "Lower\\nSaxony"}', "Lower Saxony"),  # one line, always
        ('{"answer": "He said \\"yes\\""}', 'He said "yes"'),
        # cut off by the token cap inside the string: what it had
        ('{"answer": "Ferdinand Por', "Ferdinand Por"),
        # a server that ignores `format`: the reply as it is, on one line
        ("Ferdinand Porsche.\nHe designed it.", "Ferdinand Porsche. He designed it."),
        ('{"answer": 1875}', "1875"),
        ("", ""),
    ],
)
def test_parse_answer(reply: str, answer: str) -> None:
    assert parse_answer(reply) == answer


def test_reader_format_asks_for_the_answer_and_its_passage_numbers() -> None:
    assert READER_FORMAT["required"] == ["answer", "passages"]
    assert READER_FORMAT["properties"]["answer"] == {"type": "string"}
    three = reader_format(3)
    assert three["properties"]["passages"]["items"]["enum"] == [1, 2, 3]
    assert READER_FORMAT["properties"]["passages"]["items"] == {"type": "integer"}  # not changed
    json.dumps(three)  # sent to Ollama as JSON


def _result(mode: str, fallback: str | None = None) -> RetrievalResult:
    return RetrievalResult(
        query="q",
        namespace="ns",
        entities=[],
        matches=[],
        passages=[RetrievedPassage("a", "a", "A", "text", 0.5)],
        mode=mode,  # type: ignore[arg-type]
        fallback_reason=fallback,
    )


def test_score_kind_says_what_the_score_is() -> None:
    assert [_result(m).score_kind for m in ("pagerank", "dense", "hybrid")] == [
        "pagerank_mass",
        "cosine",
        "rrf",
    ]


def test_cli_json_carries_score_kind_and_fallback_reason_also_nested() -> None:
    res = _result("dense", "no entities found in the query")
    out = to_jsonable(res)
    assert (out["mode"], out["score_kind"]) == ("dense", "cosine")
    assert out["fallback_reason"] == "no entities found in the query"
    assert out["passages"][0] == {
        "id": "a",
        "doc_id": "a",
        "title": "A",
        "text": "text",
        "score": 0.5,
        "provenance": {
            "source": None,
            "heading_path": [],
            "page_start": None,
            "page_end": None,
            "char_start": None,
            "char_end": None,
        },
    }
    nested = to_jsonable(AnswerResult("x", _result("hybrid"), 1, 2))
    assert nested["retrieval"]["score_kind"] == "rrf" and nested["answer"] == "x"
    json.dumps(nested)


def test_cli_mode_hybrid_is_a_valid_setting_and_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    # `terag retrieve --mode hybrid` once died with "unknown setting hybrid"; the mode goes to
    # retrieve(mode=...), the settings stay the preset's.
    from terag_neo4j.cli import build_parser
    from terag_neo4j.cli.commands import _settings

    monkeypatch.delenv("TERAG_RETRIEVAL", raising=False)
    args = build_parser().parse_args(["retrieve", "q", "--mode", "hybrid", "-n", "ns"])
    settings = _settings(args)
    assert args.mode == "hybrid" and settings.namespace == "ns"
    assert settings.retrieval == _settings(build_parser().parse_args(["retrieve", "q"])).retrieval
