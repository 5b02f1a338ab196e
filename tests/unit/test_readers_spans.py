"""Where a passage lies in its document's text: `text[char_start:char_end]` holds exactly the
passage's words (whitespace runs collapsed), in order, and chunking loses no character."""

from __future__ import annotations

from collections import Counter

import pytest

from terag_neo4j.core.documents import Document
from terag_neo4j.indexing.chunking import _sentences, chunk_spans
from terag_neo4j.indexing.loading import default_tokenizer, to_passages

TEXTS = {
    "markdown": "# Guide\n\nIntro line one\nline two.\n\n## Setup\n\n"
    + " ".join(f"Step {i} sets   up part {i}." for i in range(40))
    + "\n\n### Deep\n\nA   spaced\tout   paragraph.\n",
    "plain headings": "Overview\n\nThe system has parts. Each part works.\n\nDetails\n\n"
    + " ".join(f"Detail {i} matters." for i in range(30)),
    "long sentence": "Start. " + " ".join(f"word{i}" for i in range(700)) + ". End.",
    "quotes": 'He asked "What is God?" Then he left. She said \u201cNo.\u201d After that (a '
    "pause.) Silence fell. " * 20,
    "repeats": "Yes. No. Yes. No. Yes. No.\n\nYes. No.\n\n" * 30,
}


@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize(("max_tokens", "overlap"), [(32, 8), (128, 16)])
def test_spans_hold_the_passage_text(name: str, max_tokens: int, overlap: int) -> None:
    text = TEXTS[name]
    chunks = list(chunk_spans(text, max_tokens, overlap, default_tokenizer()))
    assert chunks
    last = -1
    for c in chunks:
        assert text[c.start : c.end].split() == c.text.split()
        assert not text[c.start].isspace() and not text[c.end - 1].isspace()
        assert c.start > last  # in order; an overlapping passage starts after the last start
        last = c.start


def test_passages_carry_their_spans_and_heading_paths() -> None:
    doc = Document(id="d", title="Guide", text=TEXTS["markdown"].split("\n", 2)[2])
    ps = list(to_passages([doc], 32, 8))
    assert {p.heading_path for p in ps} == {(), ("Setup",), ("Setup", "Deep")}
    for p in ps:
        assert p.char_start is not None and p.char_end is not None
        assert doc.text[p.char_start : p.char_end].split() == p.text.split()
        assert p.page_start is None and p.page_end is None  # text has no pages


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_no_character_is_lost(name: str) -> None:
    text = TEXTS[name]
    chunks = list(chunk_spans(text, 32, 0, default_tokenizer()))  # no overlap: each char once
    # Headings become the passages' heading paths, not their text.
    body = [line for line in text.splitlines() if not line.startswith("#")]
    body = [line for line in body if line not in {"Overview", "Details"}]
    assert Counter("".join(" ".join(c.text for c in chunks).split())) == Counter(
        "".join("".join(body).split())
    )


def test_sentence_splitting_keeps_closing_quotes() -> None:
    para = 'It was his book" What is God?" Then came more. She said \u201cStop.\u201d Then left.'
    assert _sentences(para) == [
        'It was his book" What is God?"',
        "Then came more.",
        "She said \u201cStop.\u201d",
        "Then left.",
    ]
