"""PDF: the text layer, page by page; where each page starts is kept for citations."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from terag_neo4j.indexing.inputs import Document, InputError
from terag_neo4j.indexing.readers.common import check_size, one_line, require

log = logging.getLogger(__name__)
# pypdf warns about every structure it repairs ("EOF marker not found", ...): a file it cannot
# read is reported once, in the one-line error that names it.
logging.getLogger("pypdf").setLevel(logging.ERROR)
PAGE_BREAK = "\n\n"  # pages never share a paragraph
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def read_pdf(path: Path, doc_id: str, source: str) -> Document:
    """The PDF's text, its pages joined by a blank line; `Document.pages` holds where each page
    starts. One page's text is extracted at a time and only the text is kept."""
    pypdf = require("pypdf")
    from pypdf.errors import PdfReadError

    try:
        reader = pypdf.PdfReader(path)
        if reader.is_encrypted and not _decrypt(reader):
            raise InputError(
                f"{path}: the PDF is encrypted with a password; save an unprotected copy and "
                "index that (nothing indexed for it)"
            )
        title = _title(reader)
        parts: list[str] = []
        starts: list[int] = []
        size = 0
        for page in reader.pages:
            text = _CONTROL.sub("", page.extract_text() or "").strip()
            starts.append(size)
            parts.append(text)
            size += len(text) + len(PAGE_BREAK)
            check_size(path, size)
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
