"""Unit tests of the LangChain mapping both ways: RetrievalResult -> Document, and LangChain
documents -> TERAG documents with their ids (no server needed)."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from terag_neo4j import InputError
from terag_neo4j.core.results import MatchedConcept, Provenance, RetrievalResult, RetrievedPassage
from terag_neo4j.integrations.langchain import (
    TeragRetriever,
    from_langchain,
    passage_content,
    to_documents,
)


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
            RetrievedPassage(
                "a.md",
                "a.md",
                "Porsche",
                "Porsche is a German maker.",
                0.4,
                Provenance("/corpus/a.md", ("Porsche", "History"), None, None, 0, 26),
            ),
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
        "provenance": {
            "source": "/corpus/a.md",
            "heading_path": ["Porsche", "History"],
            "page_start": None,
            "page_end": None,
            "char_start": 0,
            "char_end": 26,
        },
        "citation": "a.md · Porsche > History",
        "score_kind": "pagerank_mass",
        "namespace": "sample",
        "matched_concepts": [
            {"name": "Porsche", "type": "organization", "match": "exact", "weight": 0.75},
            {"name": "Ferdinand Porsche", "type": "person", "match": "semantic", "weight": 0.25},
        ],
        "mode": "pagerank",
        "fallback_reason": None,
    }
    assert second.metadata["doc_id"] == "b.md" and second.metadata["passage_id"] == "b.md#1"
    # A passage without provenance (a namespace indexed before it existed): none, not an error
    assert second.metadata["provenance"]["source"] is None
    assert second.metadata["citation"] == "b.md"


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


@pytest.mark.parametrize(
    ("mode", "kind"), [("pagerank", "pagerank_mass"), ("dense", "cosine"), ("hybrid", "rrf")]
)
def test_score_kind_follows_the_mode_that_ranked(mode: str, kind: str) -> None:
    res = _result()
    res.mode = mode  # type: ignore[assignment]
    res.fallback_reason = "no entities found in the query" if mode == "dense" else None
    meta = to_documents(res)[0].metadata
    assert (meta["mode"], meta["score_kind"]) == (mode, kind)
    assert meta["fallback_reason"] == res.fallback_reason


def test_langchain_ids_come_from_id_then_metadata_then_source() -> None:
    docs = [
        Document(page_content="a", id="given"),
        Document(page_content="b", metadata={"id": 7, "source": "x.md"}),
        Document(page_content="c", metadata={"source": "docs/c.md", "title": "C"}),
        Document(page_content="d", metadata={"source": "book.pdf", "page": 3}),
    ]
    ours = from_langchain(docs)
    assert [d.id for d in ours] == ["given", "7", "docs/c.md", "book.pdf#page=3"]
    assert [d.text for d in ours] == ["a", "b", "c", "d"]
    assert (ours[2].title, ours[2].source) == ("C", "docs/c.md")
    assert ours[0].title == "" and ours[0].title_is_name


def test_documents_sharing_a_source_are_numbered_in_order() -> None:
    # A splitter's chunks of one file: each stays its own document, in a stable order.
    docs = [Document(page_content=t, metadata={"source": "a.md"}) for t in ("one", "two")]
    docs.append(Document(page_content="three", metadata={"source": "b.md"}))
    assert [d.id for d in from_langchain(docs)] == ["a.md#0", "a.md#1", "b.md"]


def test_a_document_without_id_or_source_gets_a_hash_of_its_text() -> None:
    first, second, again = from_langchain(
        [Document(page_content="x"), Document(page_content="y"), Document(page_content="x")]
    )
    assert first.id != second.id and len(first.id) == 16
    assert from_langchain([Document(page_content="x")])[0].id == first.id  # stable across calls
    assert again.id == first.id  # the same text is the same document


def test_explicit_ids_win_and_must_be_unique() -> None:
    docs = [Document(page_content="a", id="keep"), Document(page_content="b")]
    assert [d.id for d in from_langchain(docs, ids=["x", "y"])] == ["x", "y"]
    with pytest.raises(InputError, match="2 ids for 1 documents"):
        from_langchain(docs[:1], ids=["x", "y"])
    with pytest.raises(InputError, match="unique"):
        from_langchain(docs, ids=["same", "same"])


def test_delete_without_ids_is_refused_not_delete_all() -> None:
    # No client is needed: the refusal comes before any call to Neo4j.
    with pytest.raises(InputError, match="drop"):
        TeragRetriever(k=1).delete([])
