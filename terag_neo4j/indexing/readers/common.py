"""What every reader shares: optional imports, size limits, one-line messages.

The limits below bound what one file may cost before its text exists: a small file can inflate
(a zip bomb in a .docx) or make the reader repeat work (a PDF whose thousands of pages share one
large content stream), so each reader checks them while it inflates or before it extracts, never
after. They are module constants, read at call time, so tests and embedders may change them.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from terag_neo4j import errors
from terag_neo4j.core import documents as inputs
from terag_neo4j.core.documents import InputError

EXTRA = "pip install 'terag-neo4j[documents]'"


MiB = 1024 * 1024
# An HTML page's bytes, checked before it is read (its parse holds about 25 times that)
MAX_HTML_BYTES = 64 * MiB
# A .docx: its members, and the bytes they inflate to, all together and each against its
# compressed size (past a minimum: small parts compress any way they like)
MAX_ZIP_MEMBERS = 10_000
MAX_ZIP_INFLATED = 256 * MiB
MAX_ZIP_RATIO = 100
ZIP_RATIO_FROM = 4 * MiB
# A PDF: its pages, and the decoded content-stream bytes its pages draw (a stream counted once
# for each page that draws it), all together and against the file's size (past a minimum)
MAX_PDF_PAGES = 10_000
MAX_PDF_CONTENT = 128 * MiB
MAX_PDF_CONTENT_RATIO = 100
PDF_RATIO_FROM = 16 * MiB
# ... and the content-stream operations the text extractor runs, form XObjects included (a form
# drawn 5,000 times on a page is parsed 5,000 times, and no page's own content shows it): text
# pages run about one for every 20 bytes of content, well under one per byte of the file
MAX_PDF_OPERATIONS = 8_000_000
PDF_OPERATIONS_PER_BYTE = 10
PDF_OPERATIONS_FROM = 250_000


class MissingReader(InputError):
    """A document format whose reader library is not installed."""


class TooLarge(InputError):
    """A file beyond one of the readers' limits (its size, what it inflates to, its pages)."""


def require(module: str) -> ModuleType:
    """The reader library `module`, or an error that says how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingReader(f"reading this format needs the {module!r} package: {EXTRA}") from e


def check_size(path: Path, chars: int) -> None:
    # Read at call time: tests and callers may lower the limit.
    limit = inputs.MAX_DOCUMENT_CHARS
    if chars > limit:
        raise TooLarge(
            f"{path}: over {chars:,} characters of text, beyond the {limit:,}-character limit "
            "of a document; split it into smaller files"
        )


def one_line(e: BaseException, limit: int = 160) -> str:
    """An exception as a short single line (its type where it has no message), for a message
    that names the file."""
    return errors.one_line(e, limit) or type(e).__name__
