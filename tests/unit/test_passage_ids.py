"""Passage ids never collide: a document whose id holds '#' or '%' cannot take another
document's passage id, and ids without those characters read as they always did (a benchmark
record's passage id is its dataset id)."""

from __future__ import annotations

import itertools

from terag_neo4j.core.documents import Document
from terag_neo4j.core.passage_ids import passage_id, renamed
from terag_neo4j.indexing.loading import split_document

TRICKY = ["x", "x#1", "x#1#0", "x%231", "x%23", "%", "#", "##", "a/b#c", "x#", "x%", "x#01"]


def test_every_document_and_position_has_its_own_id() -> None:
    named = [(d, None) for d in TRICKY] + [(d, i) for d in TRICKY for i in range(3)]
    ids = [passage_id(d, i) for d, i in named]
    assert len(set(ids)) == len(ids), [
        (a, b) for a, b in itertools.combinations(named, 2) if passage_id(*a) == passage_id(*b)
    ]
    for d, i in named:  # one '#' at most, and only before the position
        assert passage_id(d, i).count("#") == (0 if i is None else 1)


def test_plain_ids_read_as_before() -> None:
    assert passage_id("2wiki:Ferdinand Porsche") == "2wiki:Ferdinand Porsche"
    assert passage_id("/docs/a.md", 3) == "/docs/a.md#3"
    assert passage_id("C#", 0) == "C%23#0" and passage_id("100%") == "100%25"


def test_a_document_named_like_another_documents_passage_keeps_to_itself() -> None:
    text = "\n\n".join(f"Paragraph {i} about Wolfsburg and Volkswagen. " * 6 for i in range(6))
    x = split_document(Document(id="x", title="", text=text), 40, 0)
    assert len(x) >= 3
    taker = split_document(Document(id=x[1].id, title="", text="Short."), 40, 0)
    record = split_document(Document(id=x[1].id, title="", text="Short.", is_passage=True), 40, 0)
    assert {p.id for p in x}.isdisjoint({taker[0].id, record[0].id})
    assert taker[0].doc_id == "x#1" and taker[0].id == "x%231"
    plain = split_document(
        Document(id="hotpot-17", title="T", text="Short.", is_passage=True), 9, 0
    )
    assert plain[0].id == "hotpot-17"


def test_the_first_schemes_ids_map_onto_the_current_ones() -> None:
    assert renamed("x#1", "x#1", 0) == "x%231"  # the only passage of `x#1`
    assert renamed("a#b#2", "a#b", 2) == "a%23b#2"
    assert renamed("p%q", "p%q", 0) == "p%25q"
    assert renamed("x#1", "x", 1) is None  # a plain document id: the same under both
    assert renamed("odd", "a#b", 0) is None  # not an id the first scheme made
