"""Where a passage came from, as every surface reports it: one typed object from the graph's
passage properties to the CLI's citation line and the integrations' metadata."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

EN_DASH = "\u2013"  # between the pages of a range, as a printed citation has it

# The passage properties a read returns as its `provenance` map (one list for every Cypher read
# and the service's schema); a passage written before they existed has none of them.
PROVENANCE_FIELDS = ("source", "heading_path", "page_start", "page_end", "char_start", "char_end")


@dataclass(frozen=True)
class Provenance:
    """Where a passage lies in what was indexed: the file (or URL) it was read from, the
    headings above it (outermost first), the pages it spans (1-based, inclusive) and its
    characters in the document's extracted text. A field the input could not give is None
    (or empty)."""

    source: str | None = None
    heading_path: tuple[str, ...] = ()
    page_start: int | None = None
    page_end: int | None = None
    char_start: int | None = None
    char_end: int | None = None

    @classmethod
    def from_map(cls, m: Mapping[str, Any] | None) -> Provenance:
        """From a read's `provenance` map or a JSON object; missing keys and nulls are absent."""
        m = m or {}

        def num(key: str) -> int | None:
            v = m.get(key)
            return None if v is None else int(v)

        return cls(
            source=m.get("source") or None,
            heading_path=tuple(str(h) for h in (m.get("heading_path") or ())),
            page_start=num("page_start"),
            page_end=num("page_end"),
            char_start=num("char_start"),
            char_end=num("char_end"),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the heading path as a list): the metadata integrations hand on."""
        return {
            "source": self.source,
            "heading_path": list(self.heading_path),
            "page_start": self.page_start,
            "page_end": self.page_end,
            "char_start": self.char_start,
            "char_end": self.char_end,
        }

    @property
    def pages(self) -> str:
        """`p. 14`, `p. 14-15` (with an en dash), or "" where the format has no pages."""
        if self.page_start is None:
            return ""
        end = self.page_end if self.page_end is not None else self.page_start
        return (
            f"p. {self.page_start}"
            if end == self.page_start
            else f"p. {self.page_start}{EN_DASH}{end}"
        )

    def citation(self, fallback: str = "") -> str:
        """One line a reader can check: `guideline.pdf p. 14-15 · Dosing > Adults` (the file's
        name, not its folders; a URL whole; `fallback`, e.g. the document id, without a source)."""
        src = self.source or fallback
        if src and "://" not in src:
            src = src.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        head = " ".join(x for x in (src, self.pages) if x)
        return " · ".join(x for x in (head, " > ".join(self.heading_path)) if x)


def provenance_of(passage: Any) -> Provenance:
    """The provenance of a `RetrievedPassage`, or of the service's `Passage` (a model with the
    same fields), or a passage read before provenance existed (none)."""
    prov: Any = getattr(passage, "provenance", None)
    if isinstance(prov, Provenance):
        return prov
    if hasattr(prov, "model_dump"):
        prov = prov.model_dump()
    return Provenance.from_map(prov if isinstance(prov, Mapping) else None)
