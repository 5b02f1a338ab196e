"""Where chunking's passages lie in their text: passages have the text's whitespace runs
collapsed to single spaces; `Spans` finds each one's character span in the original."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from itertools import accumulate

from terag_neo4j.errors import TeragError

# A run of whitespace other than one plain space: where collapsing whitespace moves offsets.
_ODD_SPACE = re.compile(r"\s{2,}|[^\S ]")


class Spans:
    """Finds passages in the text they came from. The text is searched with its whitespace
    collapsed (as passages have it); a position there maps back through the places where the
    two differ: after each run of whitespace that is not one plain space."""

    def __init__(self, text: str) -> None:
        self.norm = " ".join(text.split())
        # (offset in the text, offset in the collapsed text) of the first character after
        # each such run: between two of them, the texts are alike character for character
        lead = len(text) - len(text.lstrip())
        runs = [m.span() for m in _ODD_SPACE.finditer(text, lead)]
        if runs and runs[-1][1] == len(text):
            runs.pop()  # trailing whitespace: nothing follows it
        ends = [end for _, end in runs]
        # the characters dropped before each run's end: all of the leading run, all but one
        # of each later run
        shifts = accumulate((end - start - 1 for start, end in runs), initial=lead)
        next(shifts)
        self.starts = array("q", [lead, *ends] if lead else ends)
        norm = [end - shift for end, shift in zip(ends, shifts, strict=True)]
        self.norm_starts = array("q", [0, *norm] if lead else norm)
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
