"""PDF: the text layer, page by page; where each page starts is kept for citations."""

from __future__ import annotations

import logging
import re
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

from terag_neo4j.core.documents import Document, InputError
from terag_neo4j.indexing.readers import common
from terag_neo4j.indexing.readers.common import TooLarge, check_size, one_line, require

log = logging.getLogger(__name__)
# pypdf warns about every structure it repairs ("EOF marker not found", ...): a file it cannot
# read is reported once, in the one-line error that names it.
logging.getLogger("pypdf").setLevel(logging.ERROR)
PAGE_BREAK = "\n\n"  # pages never share a paragraph
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


class _OverBudget(BaseException):
    """Raised from pypdf's operator callback: a BaseException, as pypdf catches every Exception
    from a form XObject's extraction and goes on with the next one."""


def read_pdf(path: Path, doc_id: str, source: str) -> Document:
    """The PDF's text, its pages joined by a blank line; `Document.pages` holds where each page
    starts. One page's text is extracted at a time and only the text is kept."""
    pypdf = require("pypdf")
    from pypdf.errors import LimitReachedError, PdfReadError

    size = path.stat().st_size
    budget = min(
        common.MAX_PDF_OPERATIONS,
        max(common.PDF_OPERATIONS_FROM, common.PDF_OPERATIONS_PER_BYTE * size),
    )
    ops = 0

    def count(*_: Any) -> None:
        nonlocal ops
        ops += 1
        if ops > budget:
            raise _OverBudget

    try:
        # pypdf flattens the whole page tree when the first page is asked for
        with pypdf.apply_configuration(page_tree_maximum_entries=2 * common.MAX_PDF_PAGES):
            reader = pypdf.PdfReader(path)
            if reader.is_encrypted and not _decrypt(reader):
                raise InputError(
                    f"{path}: the PDF is encrypted with a password; save an unprotected copy "
                    "and index that (nothing indexed for it)"
                )
            check_pages(path, reader)
            title = _title(reader)
            parts: list[str] = []
            starts: list[int] = []
            chars = 0
            for page in reader.pages:
                text = page.extract_text(visitor_operand_before=count) or ""
                text = _CONTROL.sub("", text).strip()
                starts.append(chars)
                parts.append(text)
                chars += len(text) + len(PAGE_BREAK)
                check_size(path, chars)
    except _OverBudget:
        raise TooLarge(
            f"{path}: over {budget:,} drawing operations, beyond the limit for a {size:,}-byte "
            "PDF (its pages or forms repeat content?); nothing indexed for it"
        ) from None
    except LimitReachedError as e:
        raise TooLarge(f"{path}: beyond a limit of the PDF reader ({one_line(e)})") from e
    except InputError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as e:
        raise InputError(f"{path}: not a readable PDF ({one_line(e)})") from e
    if not any(parts):
        raise InputError(
            f"{path}: no text layer ({len(parts)} page(s), only images): it looks scanned; "
            "run OCR (e.g. ocrmypdf) first; nothing indexed for it"
        )
    return Document(
        id=doc_id,
        text=PAGE_BREAK.join(parts),
        title=title or path.stem.replace("_", " ").strip(),
        source=source,
        title_is_name=bool(title),
        pages=tuple(starts),
    )


def check_pages(path: Path, reader: Any) -> None:
    """Refuse a PDF whose pages would make the extractor parse more than the limits allow, before
    any page is extracted: each page parses its content streams anew, so a stream is counted
    once for every page that draws it (thousands of pages can share one large stream, which the
    extracted text, often none, never shows). Each distinct stream is decoded once here; pypdf
    keeps the decoded bytes for the extraction that follows."""
    if _declared_pages(reader) > common.MAX_PDF_PAGES:
        raise TooLarge(_too_many_pages(path))
    file_size = path.stat().st_size
    by_ratio = max(common.PDF_RATIO_FROM, common.MAX_PDF_CONTENT_RATIO * file_size)
    sizes: dict[Hashable, int] = {}
    total = 0
    # The page tree walked here, one page at a time: pypdf reads every page of the tree before
    # it hands out the first, which for a bomb costs more than the refusal
    for pages, page in enumerate(_page_dicts(reader), 1):
        if pages > common.MAX_PDF_PAGES:
            raise TooLarge(_too_many_pages(path))
        for key, stream in _content_streams(page):
            if key not in sizes:
                sizes[key] = _decoded_size(path, stream)
            total += sizes[key]
        if total > common.MAX_PDF_CONTENT:
            raise TooLarge(
                f"{path}: its pages draw over {total:,} bytes of content, beyond the "
                f"{common.MAX_PDF_CONTENT:,}-byte limit of a PDF; split it into smaller files"
            )
        if total > by_ratio:
            raise TooLarge(
                f"{path}: its pages draw over {total:,} bytes of content from a {file_size:,}-byte "
                f"file, beyond {common.MAX_PDF_CONTENT_RATIO} times its size (pages repeating "
                "one large content stream?); nothing indexed for it"
            )


def _too_many_pages(path: Path) -> str:
    return (
        f"{path}: more than {common.MAX_PDF_PAGES:,} pages, the limit of a PDF; split it into "
        "smaller files"
    )


def _page_dicts(reader: Any) -> Iterator[Any]:
    """The page tree's leaves in order, read as they are reached; a node seen twice (a loop) is
    skipped, a tree deeper than pypdf allows ends the walk (pypdf's own walk then reports it)."""
    from pypdf.generic import ArrayObject, IndirectObject

    try:
        stack = [(reader.trailer["/Root"]["/Pages"], 0)]
    except Exception:  # a broken catalogue: the extraction reports the file
        return
    seen: set[tuple[int, int]] = set()
    while stack:
        ref, depth = stack.pop()
        node = ref.get_object()  # only now: a kid is read when its turn comes
        kids = node.get("/Kids") if hasattr(node, "get") else None
        if kids is None:
            yield node
            continue
        kids = kids.get_object()
        if depth > 100 or not isinstance(kids, ArrayObject):
            return
        for kid in reversed(kids):
            if isinstance(kid, IndirectObject):
                if (kid.idnum, kid.generation) in seen:
                    continue
                seen.add((kid.idnum, kid.generation))
            stack.append((kid, depth + 1))


def _declared_pages(reader: Any) -> int:
    try:
        return int(reader.trailer["/Root"]["/Pages"]["/Count"])
    except Exception:  # a broken catalogue: walking the page tree tells
        return 0


def _content_streams(page: Any) -> Iterator[tuple[Hashable, Any]]:
    """A page's content streams, each with a key that is the same wherever it is drawn."""
    from pypdf.generic import ArrayObject, IndirectObject, StreamObject

    def one(value: Any) -> tuple[Hashable, Any]:
        if isinstance(value, IndirectObject):
            return (value.idnum, value.generation), value.get_object()
        return id(value), value

    if "/Contents" not in page:
        return
    key, value = one(page.raw_get("/Contents"))
    if isinstance(value, ArrayObject):
        for item in value:
            k, v = one(item)
            if isinstance(v, StreamObject):
                yield k, v
    elif isinstance(value, StreamObject):
        yield key, value


def _decoded_size(path: Path, stream: Any) -> int:
    from pypdf.errors import LimitReachedError

    try:
        return len(stream.get_data())
    except LimitReachedError as e:
        raise TooLarge(f"{path}: a content stream beyond pypdf's limits ({one_line(e)})") from e
    except Exception as e:  # a stream it cannot decode: the extraction reports the file
        log.debug("%s: a content stream not decoded for its size: %s", path, one_line(e))
        return 0


def _decrypt(reader: object) -> bool:
    """An encrypted PDF that opens without a password (only its editing is restricted)."""
    try:
        return bool(reader.decrypt(""))  # type: ignore[attr-defined]
    except Exception as e:  # pypdf raises several types for unsupported encryption
        log.debug("decrypting with an empty password failed: %s", e)
        return False


def _title(reader: object) -> str:
    try:
        meta = reader.metadata  # type: ignore[attr-defined]
        title = str(meta.title or "").strip() if meta else ""
    except Exception as e:  # a broken info dictionary costs the title, not the document
        log.debug("unreadable PDF metadata: %s", e)
        return ""
    return title if len(title.split()) <= 20 else ""
