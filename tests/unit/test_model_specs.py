"""Parsing model specs, the prefixes each model family gets, and the handling of endpoint
answers that are errors or malformed (unit tests of parsing and error handling: no model and no
server; the endpoints themselves are tested in tests/integration/test_model_backends.py and
test_reranker.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.core.results import RetrievedPassage
from terag_neo4j.embeddings import model_id, settings_embedder
from terag_neo4j.embeddings.spec import model_prefixes, parse_spec
from terag_neo4j.reranking import RerankError, make_reranker
from terag_neo4j.reranking.rerankers import HttpReranker
from terag_neo4j.retrieval.reranked import reranked


def test_each_kind_of_spec(tmp_path: Path) -> None:
    packaged = frozenset({"bge-small-en-v1.5"})
    assert parse_spec("bge-small-en-v1.5", packaged).kind == "packaged"
    assert parse_spec("st:BAAI/bge-base-en-v1.5").id == "BAAI/bge-base-en-v1.5"
    assert parse_spec("BAAI/bge-base-en-v1.5").id == "BAAI/bge-base-en-v1.5"
    assert parse_spec(f"st:{tmp_path}").id == str(tmp_path) == parse_spec(str(tmp_path)).id
    assert parse_spec("ollama:nomic-embed-text").id == "ollama:nomic-embed-text:latest"
    assert parse_spec("ollama:bge-m3:567m").id == "ollama:bge-m3:567m"
    assert parse_spec(f"onnx:{tmp_path}").id == f"onnx:{tmp_path}"
    assert parse_spec("openai:text-embedding-3-small").kind == "openai"
    assert parse_spec("https://api.jina.ai/v1/rerank#jina-reranker-v2").kind == "http"
    assert model_id("sentence-transformers/all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    for bad in ("", "  ", "ollama:", "onnx: "):
        with pytest.raises(SettingsError):
            parse_spec(bad)


def test_prefixes_by_family_and_settings() -> None:
    assert model_prefixes("intfloat/e5-base-v2") == ("query: ", "passage: ")
    assert model_prefixes("onnx:/models/e5-small-v2") == ("query: ", "passage: ")
    assert model_prefixes("ollama:nomic-embed-text:latest")[1] == "search_document: "
    assert model_prefixes("bge-small-en-v1.5") == ("", "")
    s = Settings(
        embedding_model="st:intfloat/e5-base-v2",
        embedding_query_prefix="q> ",
        _env_file=None,  # type: ignore[call-arg]
    )
    own = settings_embedder("st:intfloat/e5-base-v2", s)
    assert (own.query_prefix, own.passage_prefix) == ("q> ", "passage: ")
    # a namespace's recorded model keeps its family's prefixes, not TERAG_EMBEDDING_MODEL's
    other = settings_embedder("st:intfloat/e5-small-v2", s)
    assert other.query_prefix == "query: "


class Answers(httpx.MockTransport):
    """Unit-test stand-in for a rerank endpoint's HTTP answers (parsing only)."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(lambda request: httpx.Response(status, json=body))


def http_reranker(status: int, body: Any) -> HttpReranker:
    r = HttpReranker("http://rerank.test/v1/rerank#m", None)
    r._http = httpx.Client(transport=Answers(status, body))
    return r


def test_rerank_answers_in_either_shape_and_the_errors() -> None:
    cohere = {
        "results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]
    }
    scores, _ = http_reranker(200, cohere).score("q", ["a", "b"])
    assert scores.tolist() == pytest.approx([0.1, 0.9])
    tei = [{"index": 0, "score": 2.0}, {"index": 1, "score": -1.0}]
    assert http_reranker(200, tei).score("q", ["a", "b"])[0].tolist() == [2.0, -1.0]
    with pytest.raises(RerankError, match="without a score"):
        http_reranker(200, {"results": [{"index": 0, "relevance_score": 1}]}).score("q", ["a", "b"])
    with pytest.raises(RerankError, match="HTTP 401") as refused:
        http_reranker(401, {"error": "bad key"}).score("q", ["a"])
    assert "\n" not in str(refused.value)
    with pytest.raises(RerankError, match="no reranker"):
        make_reranker("ollama:some-model")


def test_reranked_order_follows_the_scores_and_keeps_ties_in_order() -> None:
    ps = [RetrievedPassage(str(i), "d", "", "t", 1.0 - i / 10) for i in range(4)]
    got = reranked(ps, np.array([0.2, 0.9, 0.2, 0.5], dtype=np.float32), 3)
    assert [p.id for p in got] == ["1", "3", "0"]
    assert [p.score for p in got] == pytest.approx([0.9, 0.5, 0.2])


def test_an_openai_model_without_its_url_is_refused() -> None:
    from terag_neo4j.embeddings import Embedder

    s = Settings(embedding_model="openai:m", _env_file=None)  # type: ignore[call-arg]
    with pytest.raises(SettingsError, match="TERAG_EMBEDDING_URL"):
        Embedder("openai:m", settings=s).embed(["x"])
