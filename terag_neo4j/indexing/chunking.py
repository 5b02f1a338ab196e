"""Chunking: a document's text into passages that follow its structure.

A document is read as sections (Markdown `#` headings, or a plain-text heading: a short line on
its own between blank lines) made of paragraphs. Passages never cross a section, and a paragraph
break is where a passage prefers to end: sentences are packed into passages of at most
`max_tokens` tokens of the embedding model's tokenizer, sharing up to `overlap` tokens of whole
sentences with the previous passage of the same paragraph. Only a sentence longer than a passage
is cut inside, at word boundaries, into overlapping token windows (`chunk_text`).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from terag_neo4j.config import SettingsError
from terag_neo4j.errors import TeragError
from terag_neo4j.indexing.inputs import ShouldStop, stop_if_asked

# A token is at most this many characters on average in a chunk: a 2 MB "word" (a base64 blob, a
# line without spaces) is one [UNK] token to WordPiece, so token windows alone do not bound size.
MAX_CHARS_PER_TOKEN = 32
HEADING_MAX_WORDS = 12
_ATX = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
# A sentence ends at . ! or ? (and closing quotes or brackets) before a capital or a digit.
# The closing quotes or brackets stay with the sentence: only the whitespace (group 1) is a cut.
_SENTENCE_END = re.compile(
    "(?<=[.!?])[\"'\u201d\u2019)\\]]*(\\s+)(?=[\"'\u201c\u2018(\\[]?[A-Z0-9])"
)
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Section:
    path: tuple[str, ...]  # the headings above it, outermost first
    paragraphs: tuple[str, ...]


def _plain_heading(lines: list[str], i: int) -> bool:
    """A short line standing alone between blank lines, not ending like a sentence."""
    line = lines[i].strip()
    alone = (i == 0 or not lines[i - 1].strip()) and (
        i + 1 < len(lines) and not lines[i + 1].strip()
    )
    return (
        alone
        and 0 < len(line.split()) <= HEADING_MAX_WORDS
        and len(line) <= 100
        and line[0].isalnum()
        and line[0] == line[0].upper()
        and not line.endswith((".", ",", ";", ":", "!", "?"))
        and any(
            i2 < len(lines) and lines[i2].strip() for i2 in range(i + 2, min(i + 4, len(lines)))
        )
    )


def sections(text: str) -> list[Section]:
    """The text's sections in order; text before the first heading has an empty path."""
    lines = text.splitlines()
    out: list[Section] = []
    path: list[tuple[int, str]] = []  # (level, heading)
    paragraphs: list[str] = []
    current: list[str] = []

    def end_paragraph() -> None:
        if current:
            paragraphs.append(" ".join(s.strip() for s in current if s.strip()))
            current.clear()

    def end_section() -> None:
        end_paragraph()
        if paragraphs:
            out.append(Section(tuple(h for _, h in path), tuple(paragraphs)))
            paragraphs.clear()

    for i, raw in enumerate(lines):
        line = raw.strip()
        m = _ATX.match(line)
        level = len(m.group(1)) if m else 7 if line and _plain_heading(lines, i) else 0
        if level:
            end_section()
            path = [(lv, h) for lv, h in path if lv < level]
            path.append((level, m.group(2).strip() if m else line))
        elif not line:
            end_paragraph()
        elif len(line) > 400 and current:
            # A file of long one-line paragraphs (no blank lines): each line is a paragraph.
            end_paragraph()
            current.append(line)
        else:
            current.append(line)
            if len(line) > 400:
                end_paragraph()
    end_section()
    return out


def _token_offsets(text: str, tokenizer: object) -> list[tuple[int, int]]:
    # verbose=False: no "Token indices sequence length is longer than the specified maximum"
    # warning; a document longer than the model's window is exactly what chunking is for.
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)  # type: ignore[operator]
    return list(enc["offset_mapping"])


def chunk_text(text: str, max_tokens: int, overlap: int, tokenizer: object) -> list[str]:
    """`text` in windows of at most `max_tokens` tokens, `overlap` tokens shared.

    Windows are cut from the original string by character offsets, so nothing is re-spelled by
    decoding, and each cut is moved back to the nearest whitespace so words stay whole.
    """
    if max_tokens <= 0:
        raise SettingsError("max_tokens must be positive")
    if not 0 <= overlap < max_tokens:
        raise SettingsError("overlap must be >= 0 and smaller than max_tokens")
    offsets = _token_offsets(text, tokenizer)
    max_chars = max_tokens * MAX_CHARS_PER_TOKEN
    if len(offsets) <= max_tokens:
        return cap_chars(text.strip(), max_chars) if text.strip() else []
    chunks: list[str] = []
    start_tok = 0
    while start_tok < len(offsets):
        end_tok = min(start_tok + max_tokens, len(offsets))
        start_char = offsets[start_tok][0]
        end_char = offsets[end_tok - 1][1] if end_tok == len(offsets) else offsets[end_tok][0]
        chunk = text[start_char:end_char].strip()
        if chunk:
            chunks.extend(cap_chars(chunk, max_chars))
        if end_tok == len(offsets):
            break
        start_tok += max_tokens - overlap
    return chunks


def cap_chars(chunk: str, max_chars: int) -> list[str]:
    """`chunk` cut into pieces of at most `max_chars`, at whitespace where there is some."""
    pieces: list[str] = []
    while len(chunk) > max_chars:
        cut = chunk.rfind(" ", max_chars // 2, max_chars + 1)
        cut = cut if cut > 0 else max_chars
        pieces.append(chunk[:cut].strip())
        chunk = chunk[cut:].strip()
    if chunk:
        pieces.append(chunk)
    return [p for p in pieces if p]


def _sentences(paragraph: str) -> list[str]:
    # Cut at the whitespace only: `re.split` on the whole match would drop the closing quotes.
    cuts = [m.span(1) for m in _SENTENCE_END.finditer(paragraph)]
    bounds = zip(
        [0] + [end for _, end in cuts], [start for start, _ in cuts] + [len(paragraph)], strict=True
    )
    return [s for a, b in bounds if (s := paragraph[a:b].strip())]


def pack(
    paragraphs: tuple[str, ...] | list[str],
    max_tokens: int,
    overlap: int,
    tokenizer: object,
    should_stop: ShouldStop | None = None,
) -> list[str]:
    """One section's paragraphs as passages of whole sentences (see the module docstring)."""
    units: list[tuple[int, str, int]] = []  # (paragraph, sentence, tokens)
    for pi, para in enumerate(paragraphs):
        if pi % 1000 == 0:
            stop_if_asked(should_stop, "chunking")
        for sentence in _sentences(para):
            n = len(_token_offsets(sentence, tokenizer))
            if n > max_tokens or len(sentence) > max_tokens * MAX_CHARS_PER_TOKEN:
                units += [
                    (pi, w, max_tokens)
                    for w in chunk_text(sentence, max_tokens, overlap, tokenizer)
                ]
            else:
                units.append((pi, sentence, n))
    passages: list[str] = []
    i = 0
    while i < len(units):
        j, size = i, 0
        while j < len(units) and (j == i or size + units[j][2] <= max_tokens):
            # A paragraph that does not fit whole starts the next passage.
            if j > i and units[j][0] != units[j - 1][0] and not _fits(units, j, max_tokens - size):
                break
            size += units[j][2]
            j += 1
        passages.append(" ".join(u[1] for u in units[i:j]))
        if j >= len(units):
            break
        k, back = j, 0  # overlap: whole sentences of the same paragraph
        while k - 1 > i and units[k - 1][0] == units[j][0] and back + units[k - 1][2] <= overlap:
            back += units[k - 1][2]
            k -= 1
        i = k
    return passages


def _fits(units: list[tuple[int, str, int]], j: int, room: int) -> bool:
    para = units[j][0]
    return sum(u[2] for u in units[j:] if u[0] == para) <= room


def chunks(
    text: str,
    max_tokens: int,
    overlap: int,
    tokenizer: object,
    should_stop: ShouldStop | None = None,
) -> Iterator[tuple[tuple[str, ...], str]]:
    """(heading path, passage text) of every passage of `text`, in order."""
    for section in sections(text):
        stop_if_asked(should_stop, "chunking")
        for passage in pack(section.paragraphs, max_tokens, overlap, tokenizer, should_stop):
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
    spans = _Spans(text)
    for path, passage in chunks(text, max_tokens, overlap, tokenizer, should_stop):
        start, end = spans.find(passage)
        yield Chunk(path, passage, start, end)


class _Spans:
    """Finds passages in the text they came from. The text is searched with its whitespace
    collapsed (as passages have it); a position there maps back through the words' offsets."""

    def __init__(self, text: str) -> None:
        self.starts = array("q")  # each word's offset in the text
        self.norm_starts = array("q")  # and in the collapsed text
        words, pos = [], 0
        for m in _WORD.finditer(text):
            self.starts.append(m.start())
            self.norm_starts.append(pos)
            words.append(m.group())
            pos += len(m.group()) + 1
        self.norm = " ".join(words)
        self.cursor = 0  # passages come in order; an overlapping one starts after the last start

    def _offset(self, i: int) -> int:
        k = bisect_right(self.norm_starts, i) - 1
        return self.starts[k] + (i - self.norm_starts[k])

    def find(self, passage: str) -> tuple[int, int]:
        wanted = " ".join(passage.split())
        i = self.norm.find(wanted, self.cursor)
        if i < 0:
            raise TeragError(f"internal: chunking changed a passage's text: {wanted[:80]!r}")
        self.cursor = i + 1
        return self._offset(i), self._offset(i + len(wanted) - 1) + 1
