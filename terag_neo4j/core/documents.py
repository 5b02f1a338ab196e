"""What indexing takes in and what it makes of it: a `Document` (from a file or from Python), its
`Passage`s, their id and hash helpers, and the errors of input that cannot be read.

A passage id is stable across runs: the id the input gives it, else a hash of its content, so
re-ingesting the same input maps onto the same graph nodes."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terag_neo4j.errors import IngestCancelled, TeragError

MAX_DOCUMENT_CHARS = (
    20_000_000  # beyond this a "document" is almost surely a mistake (a dump, a binary)
)
# A document at the character limit makes about 20,000 passages of 256 tokens of prose, 80,000
# of 64; beyond this it is a dump of tiny records or headings (each its own passage), and its
# passages alone would hold hundreds of MB while they wait for extraction.
MAX_DOCUMENT_PASSAGES = 100_000


# Asked between pieces of work (paragraphs, batches, stages) whether the ingest should stop.
ShouldStop = Callable[[], bool]


@dataclass(frozen=True)
class IndexProgress:
    """Where an index call is: its passages done (written, or found already indexed unchanged)
    of all it has, and the document of the passages it is working on (None before the first)."""

    done: int
    total: int
    document: str | None


# Told each time an index call has more passages done (from the indexing thread).
OnProgress = Callable[[IndexProgress], None]


def stop_if_asked(should_stop: ShouldStop | None, stage: str) -> None:
    """Raise `IngestCancelled` when `should_stop` says so; `stage` names what was under way."""
    if should_stop is not None and should_stop():
        raise IngestCancelled(
            f"ingest cancelled while {stage}; what was written before is whole, and indexing "
            "the same documents again resumes it"
        )


class InputError(TeragError, ValueError):
    """Input that cannot be read; the message names the file and what is wrong."""


class InputNotFound(InputError):
    """A path that does not exist, or a folder without any file of a supported type."""


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    title: str = ""
    # Where it was read from: a file's absolute path (`path:line` for a JSONL record); "" for
    # a document made in Python. Passed on to its passages.
    source: str = ""
    # A record that already is a passage (benchmark corpora) is indexed whole, never re-chunked.
    is_passage: bool = False
    # Whether `title` names the content (a record's title, a Markdown heading) and so becomes a
    # title concept; a title made from a file name does not.
    title_is_name: bool = True
    # Where each page starts in `text` (a PDF's); empty for a format without pages.
    pages: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for name in ("id", "text", "title", "source"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise InputError(
                    f"Document.{name} must be a str, got {type(value).__name__} "
                    f"({_preview(value)}); convert it first, e.g. Document(id=..., text=str(x))"
                )
        if not self.id.strip():
            raise InputError("Document.id must not be empty: give each document a stable id")

    def record(self) -> dict[str, Any]:
        """Its fields as JSON values: what the service's documents route takes, and what an
        ingest job keeps of it."""
        return {
            "id": self.id,
            "text": self.text,
            "title": self.title,
            "source": self.source,
            "is_passage": self.is_passage,
            "title_is_name": self.title_is_name,
            "pages": list(self.pages),
        }


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def absolute(path: str | Path) -> str:
    """`path` made absolute, "." and ".." resolved, in POSIX form. Symlinks are kept as named:
    a folder reached through a link (`current -> v2`) keeps its ids when the link moves on."""
    return Path(os.path.abspath(path)).as_posix()


@dataclass(frozen=True)
class Passage:
    id: str
    doc_id: str
    position: int
    title: str  # what it is shown and embedded under: a record's title, or its heading path
    text: str
    heading: str = ""  # the name that becomes its title concept ("" = none)
    source: str = ""  # its document's `source`: the file (and line) it was read from
    # Provenance, for citations: the headings above it (outermost first), the pages of its
    # document it spans (1-based, inclusive; None where the format has no pages) and where its
    # text lies in the document's extracted text (None for a record indexed whole).
    heading_path: tuple[str, ...] = ()
    page_start: int | None = None
    page_end: int | None = None
    char_start: int | None = None
    char_end: int | None = None

    @property
    def content(self) -> str:
        """What the LLM, the embedder and the reader see: HippoRAG's `title + "\\n" + text`."""
        return f"{self.title}\n{self.text}" if self.title else self.text

    @property
    def hash(self) -> str:
        return content_hash(self.content)
