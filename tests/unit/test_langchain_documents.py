"""Unit tests of the LangChain mapping: RetrievalResult -> Document (no server needed)."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from terag_neo4j.integrations.langchain import TeragRetriever, passage_content, to_documents
from terag_neo4j.retrieval import MatchedConcept, RetrievalResult, RetrievedPassage


def _result() -> RetrievalResult:
    return RetrievalResult(
        query="Who founded Porsche?",
        namespace="sample",
        entities=["Porsche"],
        matches=[
            MatchedConcept(
                "Porsche",
                "sample|org|porsche",
                "org|porsche",
                "Porsche",
                "organization",
                "exact",
                1.0,
                4,
                0.75,
            ),
            MatchedConcept(
                "Porsche",
                "sample|per|fp",
                "per|fp",
                "Ferdinand Porsche",
                "person",
                "semantic",
                0.8,
                2,
                0.25,
            ),
        ],
        passages=[
            RetrievedPassage("a.md", "a.md", "Porsche", "Porsche is a German maker.", 0.4),
            RetrievedPassage("b.md#1", "b.md", "", "Stuttgart is a city.", 0.1),
        ],
        mode="pagerank",
    )


def test_documents_carry_passage_and_query_metadata() -> None:
    docs = to_documents(_result())
    assert [type(d) for d in docs] == [Document, Document]
    first, second = docs
    assert first.page_content == "Porsche\nPorsche is a German maker."
    assert second.page_content == "Stuttgart is a city."  # no title: no leading blank line
    assert first.id == "a.md"
    assert first.metadata == {
        "passage_id": "a.md",
        "doc_id": "a.md",
        "title": "Porsche",
        "score": 0.4,
        "namespace": "sample",
        "matched_concepts": [
            {"name": "Porsche", "type": "organization", "match": "exact", "weight": 0.75},
            {"name": "Ferdinand Porsche", "type": "person", "match": "semantic", "weight": 0.25},
        ],
        "mode": "pagerank",
    }
    assert second.metadata["doc_id"] == "b.md" and second.metadata["passage_id"] == "b.md#1"


def test_matched_concepts_are_not_shared_between_documents() -> None:
    first, second = to_documents(_result())
    first.metadata["matched_concepts"][0]["name"] = "changed"
    assert second.metadata["matched_concepts"][0]["name"] == "Porsche"


def test_page_content_matches_the_indexed_text() -> None:
    # The indexer embeds `title + "\n" + text`; the retriever must hand the LLM the same text,
    # even when the text starts with the title word.
    p = RetrievedPassage("x", "x", "Porsche", "Porsche 911", 1.0)
    assert passage_content(p) == "Porsche\nPorsche 911"


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError):
        TeragRetriever(k=0)


def test_empty_result_gives_no_documents() -> None:
    res = _result()
    res.passages = []
    assert to_documents(res) == []
