"""The chunker as it was before it was made linear, kept only as the reference its faster
successor must match passage for passage and offset for offset. Quadratic (a paragraph start
summed the rest of its paragraph) and cubic on a long `#` line of spaces: small inputs only.
What did not change (sentence cuts, token windows) is imported."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator

from terag_neo4j.indexing.chunking import Section, _sentences
from terag_neo4j.indexing.token_windows import MAX_CHARS_PER_TOKEN, chunk_text

HEADING_MAX_WORDS = 12
_ATX = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_WORD = re.compile(r"\S+")


def atx(line: str) -> tuple[int, str] | None:
    m = _ATX.match(line)
    return (len(m.group(1)), m.group(2).strip()) if m else None


def _plain_heading(lines: list[str], i: int) -> bool:
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
    lines = text.splitlines()
    out: list[Section] = []
    path: list[tuple[int, str]] = []
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
            end_paragraph()
            current.append(line)
        else:
            current.append(line)
            if len(line) > 400:
                end_paragraph()
    end_section()
    return out


def _count(text: str, tokenizer: object) -> int:
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)  # type: ignore[operator]
    return len(enc["offset_mapping"])


def pack(
    paragraphs: tuple[str, ...], max_tokens: int, overlap: int, tokenizer: object
) -> list[str]:
    units: list[tuple[int, str, int]] = []
    for pi, para in enumerate(paragraphs):
        for sentence in _sentences(para):
            n = _count(sentence, tokenizer)
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
            if j > i and units[j][0] != units[j - 1][0] and not _fits(units, j, max_tokens - size):
                break
            size += units[j][2]
            j += 1
        passages.append(" ".join(u[1] for u in units[i:j]))
        if j >= len(units):
            break
        k, back = j, 0
        while k - 1 > i and units[k - 1][0] == units[j][0] and back + units[k - 1][2] <= overlap:
            back += units[k - 1][2]
            k -= 1
        i = k
    return passages


def _fits(units: list[tuple[int, str, int]], j: int, room: int) -> bool:
    para = units[j][0]
    return sum(u[2] for u in units[j:] if u[0] == para) <= room


class Spans:
    def __init__(self, text: str) -> None:
        self.starts = array("q")
        self.norm_starts = array("q")
        words, pos = [], 0
        for m in _WORD.finditer(text):
            self.starts.append(m.start())
            self.norm_starts.append(pos)
            words.append(m.group())
            pos += len(m.group()) + 1
        self.norm = " ".join(words)
        self.cursor = 0

    def offset(self, i: int) -> int:
        k = bisect_right(self.norm_starts, i) - 1
        return self.starts[k] + (i - self.norm_starts[k])

    def find(self, passage: str) -> tuple[int, int]:
        wanted = " ".join(passage.split())
        i = self.norm.find(wanted, self.cursor)
        assert i >= 0
        self.cursor = i + 1
        return self.offset(i), self.offset(i + len(wanted) - 1) + 1


def chunk_spans(
    text: str, max_tokens: int, overlap: int, tokenizer: object
) -> Iterator[tuple[tuple[str, ...], str, int, int]]:
    spans = Spans(text)
    for section in sections(text):
        for passage in pack(section.paragraphs, max_tokens, overlap, tokenizer):
            yield (section.path, passage, *spans.find(passage))
