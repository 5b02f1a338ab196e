"""Chunking in linear time, bounded per document and cancellable: the same passages (and
offsets) as the quadratic chunker it replaced, on generated texts of every shape; a large text
in seconds; the passage limit and `should_stop` honoured while chunking, not after it. Real
tokenizer (the bundled model's), no services."""

from __future__ import annotations

import random
import re
import time

import pytest

import terag_neo4j
from terag_neo4j.core import documents as inputs
from terag_neo4j.core.documents import Document, InputError
from terag_neo4j.errors import IngestCancelled, TeragError
from terag_neo4j.indexing import chunking, token_windows
from terag_neo4j.indexing.loading import default_tokenizer, split_document, to_passages
from terag_neo4j.indexing.spans import Spans
from terag_neo4j.indexing.token_counts import token_counter
from tests.unit import chunking_reference as reference

WORDS = [
    "the",
    "a",
    "harbour",
    "Lighthouse",
    "keeper",
    "river",
    "1907",
    "Dr.",
    "Smith's",
    '"quoted"',
    "(bracket)",
    "[MASK]",
    "café",
    "naïve",
    "中文",
    "x\xa0y",
    "tab\there",
    "end.",
    "Why?",
    "Yes!",
    "ok;",
    "fine,",
    "#",
    "##",
    "###",
    "Heading",
    "###",
    "antidisestablishmentarianism",
]


def generated(rnd: random.Random) -> str:
    """A text mixing what the chunker tells apart: Markdown and plain headings (and lines that
    almost are), blank lines or none, long one-line paragraphs, sentences of every ending,
    words longer than a passage, non-ASCII, odd whitespace and line ends."""
    lines = []
    for _ in range(rnd.randint(1, 60)):
        r = rnd.random()
        if r < 0.15:
            lines.append(rnd.choice(["", " ", "\t"]))
        elif r < 0.22:
            hashes = "#" * rnd.randint(1, 8) + rnd.choice([" ", "  ", "\t", ""])
            words = " ".join(rnd.choices(WORDS, k=rnd.randint(0, 5)))
            lines.append(hashes + words + rnd.choice(["", " #", " ##  ", "#"]))
        elif r < 0.3:
            lines.append(" ".join(w.capitalize() for w in rnd.choices(WORDS, k=rnd.randint(1, 4))))
        elif r < 0.33:
            lines.append(" " * rnd.randint(0, 3) + "word" * rnd.randint(100, 300))
        else:
            sentences = [
                " ".join(rnd.choices(WORDS, k=rnd.randint(1, 15))).capitalize()
                + rnd.choice([".", "!", "?", '."', ")", ""])
                for _ in range(rnd.randint(1, 40))
            ]
            lines.append(rnd.choice([" ", "  ", " \u3000"]).join(sentences))
    return rnd.choice(["\n", "\r\n", "\n\n"]).join(lines) + rnd.choice(["", "\n", "  \n"])


@pytest.mark.parametrize("seed", [1, 2])
def test_passages_and_offsets_are_those_of_the_quadratic_chunker(seed: int) -> None:
    rnd, tok = random.Random(seed), default_tokenizer()
    compared = 0
    for _ in range(8):
        text = generated(rnd)
        max_tokens = rnd.choice([16, 32, 64, 256])
        overlap = rnd.choice([0, 4, max_tokens // 4])
        want = list(reference.chunk_spans(text, max_tokens, overlap, tok))
        got = [
            (c.path, c.text, c.start, c.end)
            for c in chunking.chunk_spans(text, max_tokens, overlap, tok)
        ]
        assert got == want, (seed, max_tokens, overlap, text[:200])
        assert [(s.path, s.paragraphs) for s in chunking.sections(text)] == [
            (s.path, s.paragraphs) for s in reference.sections(text)
        ]
        compared += len(got)
    assert compared > 30  # the texts made passages to compare


def test_headings_are_read_as_the_markdown_pattern_reads_them() -> None:
    rnd = random.Random(5)
    alphabet = "#  \t\u3000ab\x1c."
    for _ in range(50_000):
        line = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12))).strip()
        assert chunking._atx(line) == reference.atx(line), repr(line)


def test_a_heading_line_of_spaces_is_read_in_linear_time() -> None:
    # The pattern this replaced backtracks cubically here: 5,000 spaces took minutes.
    line = "# a" + " " * 2_000_000 + "b"
    t = time.process_time()
    assert chunking._atx(line) == (1, "a" + " " * 2_000_000 + "b")
    assert list(chunking.sections(line + "\n\nBody.")) == [
        chunking.Section(("a" + " " * 2_000_000 + "b",), ("Body.",))
    ]
    assert time.process_time() - t < 5


def test_spans_map_collapsed_offsets_back_as_before() -> None:
    rnd = random.Random(7)
    alphabet = " \t\n\r\x0b\x1c\u3000\u00a0\u2028abc"
    for _ in range(5000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40)))
        old, new = reference.Spans(text), Spans(text)
        assert new.norm == old.norm
        for i, ch in enumerate(old.norm):
            if ch != " ":  # passages start and end on a word
                assert new._offset(i) == old.offset(i), (text, i)


def test_token_counts_are_the_tokenizers_own() -> None:
    tok = default_tokenizer()
    rnd = random.Random(3)
    alphabet = "abcXYZ019 .,;!?'\"()[]#-_\t\x00\x1c\x7fÄéß中—“”…\u00a0\u200b"
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 80))) for _ in range(2000)]
    texts += ["x" * 99, "x" * 100, "x" * 101, "[MASK]", "a [mask] b", "[SEP]x", "Line 7 of it."]
    texts += [f"Line {i} of the export." for i in range(2000)]
    want = [reference._count(t, tok) for t in texts]
    assert token_counter(tok).counts(texts) == want
    assert token_counter(tok).counts(texts[-2000:]) == want[-2000:]  # all plain: one pass


def test_a_two_hundred_thousand_paragraph_text_chunks_in_seconds() -> None:
    # The quadratic chunker took 8 s for 16,000 such paragraphs and about 15 min for 160,000.
    text = "\n\n".join(f"Line {i} of the export." for i in range(200_000))
    t = time.process_time()  # CPU seconds: the test machine may be busy with others' work
    passages = split_document(Document(id="export", text=text), 256, 32)
    took = time.process_time() - t
    assert len(passages) > 5000 and passages[-1].text.endswith("Line 199999 of the export.")
    assert took < 20, f"{took:.1f} s"


def test_a_document_over_the_passage_limit_is_refused_as_soon_as_it_crosses_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(inputs, "MAX_DOCUMENT_PASSAGES", 100)
    asked = 0

    def never() -> bool:
        nonlocal asked
        asked += 1
        return False

    # 50,000 headed sections, each its own passage
    text = "".join(f"# Part {i}\n\nItem {i} is here.\n\n" for i in range(50_000))
    doc = Document(id="dump.md", text=text, source="/data/dump.md")
    with pytest.raises(InputError) as info:
        split_document(doc, 64, 8, should_stop=never)
    message = str(info.value)
    assert "'dump.md'" in message and "/data/dump.md" in message and "100 passages" in message
    assert "\n" not in message
    # chunking asks a couple of times a section: it stopped near the 101st, not after all 50,000
    assert asked < 1000
    assert len(split_document(Document(id="ok", text=text[:1500]), 64, 8)) <= 100


def test_a_document_over_the_character_limit_is_refused_before_chunking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(inputs, "MAX_DOCUMENT_CHARS", 1000)

    def must_not_chunk() -> bool:
        raise AssertionError("chunking started")

    doc = Document(id="big", text="word " * 1000)
    for call in (
        lambda: split_document(doc, 64, 8, should_stop=must_not_chunk),
        lambda: list(to_passages([doc], 64, 8)),
    ):
        with pytest.raises(InputError, match=r"'big' .*5,000 characters, over the 1,000 limit"):
            call()


def _stop_after(calls: int) -> tuple[list[float], object]:
    seen: list[float] = []

    def should_stop() -> bool:
        seen.append(time.process_time())  # CPU seconds: busy test machines stretch wall time
        return len(seen) > calls

    return seen, should_stop


@pytest.mark.parametrize("separator", ["\n\n", "\n"])
def test_should_stop_cancels_chunking_a_huge_text_promptly(separator: str) -> None:
    # One section of 400,000 paragraphs, or one paragraph of 400,000 lines
    text = separator.join(f"Line {i} of the export." for i in range(400_000))
    seen, should_stop = _stop_after(3)
    t = time.process_time()
    with pytest.raises(IngestCancelled, match="cancelled while chunking"):
        split_document(Document(id="export", text=text), 256, 32, should_stop=should_stop)  # type: ignore[arg-type]
    assert len(seen) == 4  # it raised when told, not at the end
    # chunking asks often: never more than about a second of CPU work between two questions
    gaps = [b - a for a, b in zip([t, *seen], seen, strict=False)]
    assert max(gaps) < 2.5, gaps


def _one_sentence(words: int) -> str:
    """Words and commas, no sentence end: only token windows can cut it."""
    return " ".join(f"harbour {i}" + ("," if i % 9 == 0 else "") for i in range(words))


def test_one_enormous_sentence_is_tokenized_in_pieces_as_one_call_would() -> None:
    tok = default_tokenizer()
    text = _one_sentence(40_000)  # about 450,000 characters: nine pieces
    assert len(text) > 4 * token_windows.TOKENIZE_CHARS
    whole = tok(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    starts, ends = token_windows._token_offsets(text, tok)
    assert list(zip(starts, ends, strict=True)) == list(whole["offset_mapping"])


def test_should_stop_cancels_chunking_one_enormous_sentence_promptly() -> None:
    # About 4 MB in one sentence: once one tokenizer call of 16 s on a loaded machine
    text = _one_sentence(350_000)
    seen, should_stop = _stop_after(3)
    t = time.process_time()
    with pytest.raises(IngestCancelled, match="cancelled while chunking"):
        split_document(Document(id="sentence", text=text), 256, 32, should_stop=should_stop)  # type: ignore[arg-type]
    assert len(seen) == 4
    gaps = [b - a for a, b in zip([t, *seen], seen, strict=False)]
    assert max(gaps) < 2.5, gaps


def test_should_stop_is_asked_before_each_document() -> None:
    docs = [Document(id=f"d{i}", text=f"Document {i}.") for i in range(5)]
    seen, should_stop = _stop_after(0)
    with pytest.raises(IngestCancelled):
        list(to_passages(docs, 64, 8, should_stop=should_stop))  # type: ignore[arg-type]
    assert len(seen) == 1
    assert len(list(to_passages(docs, 64, 8, should_stop=lambda: False))) == 5


def test_ingest_cancelled_is_a_public_terag_error_with_a_one_line_message() -> None:
    assert terag_neo4j.IngestCancelled is IngestCancelled
    assert issubclass(IngestCancelled, TeragError)
    with pytest.raises(IngestCancelled) as info:
        inputs.stop_if_asked(lambda: True, "embedding passages")
    assert re.fullmatch(r"ingest cancelled while embedding passages; [^\n]+", str(info.value))
    inputs.stop_if_asked(None, "anything")  # no should_stop: never stops


def test_the_chunking_bench_measures_each_size_and_lifts_the_limit_only_while_it_measures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from terag_bench import chunking_bench

    monkeypatch.setattr(inputs, "MAX_DOCUMENT_CHARS", 30_000)  # 2,000 lines are over it
    result = chunking_bench.run([200, 2000], 256, 32)
    rows = {(r["lines"], r["blank_lines"]): r for r in result["runs"]}
    assert set(rows) == {(200, True), (200, False), (2000, True), (2000, False)}
    assert not rows[200, True]["over_char_limit"] and rows[2000, True]["over_char_limit"]
    assert all(r["passages"] > 0 and r["wall_s"] >= 0 for r in rows.values())
    assert rows[2000, True]["passages"] > rows[200, True]["passages"]
    assert inputs.MAX_DOCUMENT_CHARS == 30_000


def test_spans_and_sentences_read_in_small_blocks_are_those_of_one_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Blocks end where no word, run of whitespace or sentence end is cut: with blocks of a
    few characters the collapsed text, its offsets and the sentences are those of one read."""
    from terag_neo4j.indexing import spans

    rnd = random.Random(11)
    alphabet = " \t\n\u3000\u00a0abcXY9.!?\"')(["
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60))) for _ in range(3000)]
    texts += [generated(rnd) for _ in range(20)]
    whole = [(Spans(t), chunking._sentences(t)) for t in texts]
    monkeypatch.setattr(spans, "BLOCK", 3)
    monkeypatch.setattr(chunking, "SENTENCE_BLOCK", 2)
    for text, (one, sentences) in zip(texts, whole, strict=True):
        small = Spans(text)
        assert (small.norm, small.starts, small.norm_starts) == (
            one.norm,
            one.starts,
            one.norm_starts,
        ), text
        assert list(chunking._iter_sentences(text)) == sentences, text


def test_chunking_one_enormous_sentence_looks_at_should_stop_every_few_hundredths_of_a_second() -> (
    None
):
    """The whole 4 MB sentence, never stopped: the most CPU between two looks (collapsing its
    whitespace, searching it for sentence ends, a tokenizer piece, freeing 1.3 million token
    offsets, packing passages) was 0.26 s, seconds of wall time on a loaded machine."""
    text = _one_sentence(300_000)
    seen: list[float] = []

    def should_stop() -> bool:
        seen.append(time.process_time())
        return False

    t = time.process_time()
    passages = split_document(Document(id="sentence", text=text), 256, 32, should_stop=should_stop)
    seen.append(time.process_time())
    assert len(passages) > 5000
    gaps = [b - a for a, b in zip([t, *seen], seen, strict=False)]
    assert max(gaps) < 0.15, sorted(gaps)[-5:]
