"""Chunking: a document's text into passages that follow its structure.

A document is read as sections (Markdown `#` headings, or a plain-text heading: a short line on
its own between blank lines) made of paragraphs. Passages never cross a section, and a paragraph
break is where a passage prefers to end: sentences are packed into passages of at most
`max_tokens` tokens of the embedding model's tokenizer, sharing up to `overlap` tokens of whole
sentences with the previous passage of the same paragraph. Only a sentence longer than a passage
is cut inside, at word boundaries, into overlapping token windows (`token_windows.chunk_text`).

Every step is linear in the text (a million one-line paragraphs chunk in seconds), reads the
text in pieces (a section's sentences are sized a block of bounded length at a time, in one
tokenizer call each: `token_counts`; a sentence longer than a passage is tokenized a piece at a
time) and asks `should_stop` between them, so a cancel is seen within a fraction of a second,
even inside one sentence of megabytes; the passages come out as they are made, so a caller can
stop at a passage limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from terag_neo4j.core.documents import ShouldStop, stop_if_asked
from terag_neo4j.indexing.spans import Spans
from terag_neo4j.indexing.token_counts import token_counter
from terag_neo4j.indexing.token_windows import MAX_CHARS_PER_TOKEN, TOKENIZE_CHARS, chunk_text

HEADING_MAX_WORDS = 12
# Lines between two looks at `should_stop`: each a few microseconds.
STOP_EVERY = 1000
# Passages made between two looks: a passage of 256 tokens costs about 0.1 ms of CPU to pack
# and find in the text (1,000 of them were 0.1 s, seconds of wall time at load 20).
PASSAGES_PER_LOOK = 100
SIZE_BLOCK = 2000  # sentences sized per tokenizer call
# A sentence ends at . ! or ? (and closing quotes or brackets) before a capital or a digit.
# The closing quotes or brackets stay with the sentence: only the whitespace (group 1) is a cut.
_SENTENCE_END = re.compile(
    "(?<=[.!?])[\"'\u201d\u2019)\\]]*(\\s+)(?=[\"'\u201c\u2018(\\[]?[A-Z0-9])"
)
SENTENCE_BLOCK = 100_000  # characters of a paragraph searched for sentence ends at a time
_SAFE_CUT = re.compile("[a-z]")


@dataclass(frozen=True)
class Section:
    path: tuple[str, ...]  # the headings above it, outermost first
    paragraphs: tuple[str, ...]


def _atx(line: str) -> tuple[int, str] | None:
    """A Markdown heading's (level, text) from a stripped line: `#` to `######`, whitespace,
    the text, an optional closing run of `#`. What `^(#{1,6})\\s+(.+?)\\s*#*\\s*$` matches,
    in linear time: that regex backtracks cubically on a long line of spaces after a `#`."""
    rest = line.lstrip("#")
    level = len(line) - len(rest)
    if not 1 <= level <= 6 or not rest[:1].isspace():
        return None
    rest = rest.lstrip()
    if not rest or "\n" in rest:
        return None
    # The shortest non-empty text that leaves a tail of whitespace, `#`s, whitespace.
    end = len(rest.rstrip().rstrip("#").rstrip())
    return level, rest[: max(end, 1)].strip()


def _plain_heading(lines: list[str], i: int) -> bool:
    """A short line standing alone between blank lines, not ending like a sentence; `lines`
    are stripped."""
    line = lines[i]
    alone = (i == 0 or not lines[i - 1]) and (i + 1 < len(lines) and not lines[i + 1])
    return (
        alone
        and not line.endswith((".", ",", ";", ":", "!", "?"))
        and len(line) <= 100
        and line[0].isalnum()
        and line[0] == line[0].upper()
        and 0 < len(line.split()) <= HEADING_MAX_WORDS
        and any(i2 < len(lines) and lines[i2] for i2 in range(i + 2, min(i + 4, len(lines))))
    )


def sections(text: str, should_stop: ShouldStop | None = None) -> list[Section]:
    """The text's sections in order; text before the first heading has an empty path."""
    return list(iter_sections(text, should_stop))


def iter_sections(text: str, should_stop: ShouldStop | None = None) -> Iterator[Section]:
    """`sections`, each as soon as its end is read."""
    lines = [raw.strip() for raw in text.splitlines()]
    out: list[Section] = []  # the sections ended by the line just read
    path: list[tuple[int, str]] = []  # (level, heading)
    paragraphs: list[str] = []
    current: list[str] = []

    def end_paragraph() -> None:
        if current:
            paragraphs.append(" ".join(current))  # stripped, non-empty lines
            current.clear()

    def end_section() -> None:
        end_paragraph()
        if paragraphs:
            out.append(Section(tuple(h for _, h in path), tuple(paragraphs)))
            paragraphs.clear()

    last = len(lines) - 1
    for i, line in enumerate(lines):
        if i % STOP_EVERY == 0:
            stop_if_asked(should_stop, "chunking")
        if not line:
            end_paragraph()
            continue
        atx = _atx(line) if line[0] == "#" else None
        # `_plain_heading` needs a blank line after (and before): most lines fail that first
        level = (
            atx[0]
            if atx
            else 7
            if i < last and not lines[i + 1] and _plain_heading(lines, i)
            else 0
        )
        if level:
            end_section()
            yield from out
            out.clear()
            path = [(lv, h) for lv, h in path if lv < level]
            path.append((level, atx[1] if atx else line))
        elif len(line) > 400 and current:
            # A file of long one-line paragraphs (no blank lines): each line is a paragraph.
            end_paragraph()
            current.append(line)
        else:
            current.append(line)
            if len(line) > 400:
                end_paragraph()
    end_section()
    yield from out


def _iter_sentences(paragraph: str, should_stop: ShouldStop | None = None) -> Iterator[str]:
    """A long paragraph's sentences, searched `SENTENCE_BLOCK` characters at a time (asking
    `should_stop` before each): one search of a 4 MB sentence with no end is 0.06 s of CPU, of
    20 MB 0.3 s. A block ends after a lowercase letter, which no sentence end's match holds or
    looks at, so the sentences are those of one search."""
    # Cut at the whitespace only: `re.split` on the whole match would drop the closing quotes.
    start, pos = 0, 0
    while pos < len(paragraph):
        stop_if_asked(should_stop, "chunking")
        cut = _SAFE_CUT.search(paragraph, pos + SENTENCE_BLOCK)
        end = cut.end() if cut else len(paragraph)
        for m in _SENTENCE_END.finditer(paragraph, pos, end):
            if s := paragraph[start : m.start(1)].strip():
                yield s
            start = m.end(1)
        pos = end
    if s := paragraph[start:].strip():
        yield s


def _sentences(paragraph: str) -> list[str]:
    """`_iter_sentences` at once: quicker for the many short paragraphs of most texts."""
    cuts = [m.span(1) for m in _SENTENCE_END.finditer(paragraph)]
    bounds = zip(
        [0] + [end for _, end in cuts], [start for start, _ in cuts] + [len(paragraph)], strict=True
    )
    return [s for a, b in bounds if (s := paragraph[a:b].strip())]


def _section_sentences(
    paragraphs: Sequence[str], should_stop: ShouldStop | None
) -> Iterator[tuple[int, str]]:
    """(paragraph, sentence) of a section's every sentence; a long paragraph read lazily."""
    for pi, paragraph in enumerate(paragraphs):
        sentences = (
            _iter_sentences(paragraph, should_stop)
            if len(paragraph) > SENTENCE_BLOCK
            else _sentences(paragraph)
        )
        for sentence in sentences:
            yield pi, sentence


class _Units:
    """A section's sentences (and the windows of sentences too long for a passage) with their
    token counts, sized a block at a time as packing reaches them."""

    def __init__(
        self,
        paragraphs: Sequence[str],
        max_tokens: int,
        overlap: int,
        tokenizer: object,
        should_stop: ShouldStop | None,
    ) -> None:
        self.max_tokens, self.overlap, self.tokenizer = max_tokens, overlap, tokenizer
        self.should_stop = should_stop
        self.counter = token_counter(tokenizer)
        self.pending = _section_sentences(paragraphs, should_stop)
        self.para: list[int] = []  # each unit's paragraph
        self.text: list[str] = []
        self.tokens: list[int] = []
        self.done = False

    def have(self, j: int) -> bool:
        """Whether unit `j` exists, sizing more sentences until it does."""
        while j >= len(self.tokens) and not self.done:
            self._size_block()
        return j < len(self.tokens)

    def fits(self, j: int, room: int) -> bool:
        """Whether the units of `j`'s paragraph from `j` on hold at most `room` tokens; reads
        on only until they do not, so each paragraph start costs at most a passage."""
        para, tokens = self.para, self.tokens
        pi, total = para[j], 0
        while (j < len(tokens) or self.have(j)) and para[j] == pi:
            total += tokens[j]
            if total > room:
                return False
            j += 1
        return True

    def _block(self) -> list[tuple[int, str]]:
        """The next sentences to size: up to `SIZE_BLOCK` of them and `TOKENIZE_CHARS`
        characters (a block of long sentences is a long tokenizer call); sets `done` at the end.
        Passages do not depend on where blocks end: packing reads on until it has what it needs."""
        found: list[tuple[int, str]] = []
        chars = 0
        for item in self.pending:
            found.append(item)
            chars += len(item[1])
            if len(found) == SIZE_BLOCK or chars >= TOKENIZE_CHARS:
                return found
        self.done = True
        return found

    def _size_block(self) -> None:
        stop_if_asked(self.should_stop, "chunking")
        found = self._block()
        cap = self.max_tokens * MAX_CHARS_PER_TOKEN
        texts = [s for _, s in found]
        # A sentence over `cap` characters is cut into windows whatever its count: not counted
        counts = self.counter.counts([t if len(t) <= cap else "" for t in texts])
        if not found or (max(counts) <= self.max_tokens and max(map(len, texts)) <= cap):
            self.para += [pi for pi, _ in found]  # every sentence fits a passage: the usual case
            self.text += texts
            self.tokens += counts
            return
        for (pi, sentence), n in zip(found, counts, strict=True):
            if n > self.max_tokens or len(sentence) > cap:
                windows = chunk_text(
                    sentence, self.max_tokens, self.overlap, self.tokenizer, self.should_stop
                )
                for w in windows:
                    self._add(pi, w, self.max_tokens)
            else:
                self._add(pi, sentence, n)

    def _add(self, pi: int, text: str, n: int) -> None:
        self.para.append(pi)
        self.text.append(text)
        self.tokens.append(n)


def pack_lazily(
    paragraphs: Sequence[str],
    max_tokens: int,
    overlap: int,
    tokenizer: object,
    should_stop: ShouldStop | None = None,
) -> Iterator[str]:
    """One section's paragraphs as passages of whole sentences (see the module docstring),
    each as soon as it is made."""
    u = _Units(paragraphs, max_tokens, overlap, tokenizer, should_stop)
    para, tokens = u.para, u.tokens
    i, made = 0, 0
    while u.have(i):
        j, size = i, 0
        while (j < len(tokens) or u.have(j)) and (j == i or size + tokens[j] <= max_tokens):
            # A paragraph that does not fit whole starts the next passage.
            if j > i and para[j] != para[j - 1] and not u.fits(j, max_tokens - size):
                break
            size += tokens[j]
            j += 1
        yield " ".join(u.text[i:j])
        made += 1
        if made % PASSAGES_PER_LOOK == 0:
            stop_if_asked(should_stop, "chunking")
        if not u.have(j):
            break
        k, back = j, 0  # overlap: whole sentences of the same paragraph
        while k - 1 > i and para[k - 1] == para[j] and back + tokens[k - 1] <= overlap:
            back += tokens[k - 1]
            k -= 1
        i = k


def pack(
    paragraphs: Sequence[str],
    max_tokens: int,
    overlap: int,
    tokenizer: object,
    should_stop: ShouldStop | None = None,
) -> list[str]:
    """One section's paragraphs as passages of whole sentences (see the module docstring)."""
    return list(pack_lazily(paragraphs, max_tokens, overlap, tokenizer, should_stop))


def chunks(
    text: str,
    max_tokens: int,
    overlap: int,
    tokenizer: object,
    should_stop: ShouldStop | None = None,
) -> Iterator[tuple[tuple[str, ...], str]]:
    """(heading path, passage text) of every passage of `text`, in order."""
    for section in iter_sections(text, should_stop):
        stop_if_asked(should_stop, "chunking")
        for passage in pack_lazily(section.paragraphs, max_tokens, overlap, tokenizer, should_stop):
            yield section.path, passage


@dataclass(frozen=True)
class Chunk:
    """A passage of a text and where it lies in it: `text` equals `source[start:end]` with its
    whitespace runs collapsed to single spaces (chunking joins a paragraph's lines, and never
    changes, adds or drops anything else)."""

    path: tuple[str, ...]
    text: str
    start: int
    end: int


def chunk_spans(
    text: str,
    max_tokens: int,
    overlap: int,
    tokenizer: object,
    should_stop: ShouldStop | None = None,
) -> Iterator[Chunk]:
    """`chunks` with each passage's character span in `text`."""
    spans = Spans(text, should_stop)
    for path, passage in chunks(text, max_tokens, overlap, tokenizer, should_stop):
        start, end = spans.find(passage)
        yield Chunk(path, passage, start, end)
