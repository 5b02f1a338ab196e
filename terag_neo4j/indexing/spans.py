"""Where chunking's passages lie in their text: passages have the text's whitespace runs
collapsed to single spaces; `Spans` finds each one's character span in the original."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right

from terag_neo4j.core.documents import ShouldStop, stop_if_asked
from terag_neo4j.errors import TeragError

# A run of whitespace other than one plain space: where collapsing whitespace moves offsets.
_ODD_SPACE = re.compile(r"\s{2,}|[^\S ]")
_WORD_START = re.compile(r"(?<=\s)\S")  # looks behind `pos` too: the string is whole
BLOCK = 256 * 1024  # characters a block: about 10 ms of CPU


class Spans:
    """Finds passages in the text they came from. The text is searched with its whitespace
    collapsed (as passages have it); a position there maps back through the places where the
    two differ: after each run of whitespace that is not one plain space.

    The text is read `BLOCK` characters at a time, each block ending where a word starts (so
    no word or run of whitespace is cut), asking `should_stop` before each: collapsing 4 MB
    in one go held a cancel for 0.17 s of CPU, seconds of wall time on a loaded machine."""

    def __init__(self, text: str, should_stop: ShouldStop | None = None) -> None:
        words: list[str] = []  # each block's words, collapsed
        # (offset in the text, offset in the collapsed text) of the first character after
        # each such run: between two of them, the texts are alike character for character
        lead = len(text) - len(text.lstrip())
        self.starts = array("q", [lead] if lead else [])
        self.norm_starts = array("q", [0] if lead else [])
        dropped = lead  # the characters dropped so far: all of the leading run, all but one of
        # each later run
        pos = lead
        while pos < len(text):
            stop_if_asked(should_stop, "chunking")
            cut = _WORD_START.search(text, pos + BLOCK) if len(text) - pos > BLOCK else None
            end = cut.start() if cut else len(text)
            if part := " ".join(text[pos:end].split()):
                words.append(part)
            for m in _ODD_SPACE.finditer(text, pos, end):
                start, stop = m.span()
                if stop == len(text):
                    break  # trailing whitespace: nothing follows it
                dropped += stop - start - 1
                self.starts.append(stop)
                self.norm_starts.append(stop - dropped)
            pos = end
        self.norm = " ".join(words)
        self.cursor = 0  # passages come in order; an overlapping one starts after the last start

    def _offset(self, i: int) -> int:
        k = bisect_right(self.norm_starts, i) - 1
        return i if k < 0 else self.starts[k] + (i - self.norm_starts[k])

    def find(self, passage: str) -> tuple[int, int]:
        wanted = " ".join(passage.split())
        i = self.norm.find(wanted, self.cursor)
        if i < 0:
            raise TeragError(f"internal: chunking changed a passage's text: {wanted[:80]!r}")
        self.cursor = i + 1
        return self._offset(i), self._offset(i + len(wanted) - 1) + 1
