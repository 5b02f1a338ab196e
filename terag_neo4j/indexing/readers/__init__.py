"""Document readers: a file's content, whatever its format, as one typed `Document` (or, for
JSON Lines, one per record) whose text the structure-aware chunker splits.

Every reader produces Markdown-like text: headings as `#` lines (so passages carry their heading
path), paragraphs between blank lines and, for formats with pages, `Document.pages`: where each
page starts in the text. The format comes from the content (`detect`), not only the extension;
a file whose content is not what its name says is read as what it is, with a warning.
"""

from __future__ import annotations

import logging
from pathlib import Path

from terag_neo4j.core.documents import Document, InputError
from terag_neo4j.indexing.readers.detect import (
    JSONL_SUFFIXES,
    SUFFIX_KIND,
    SUPPORTED_SUFFIXES,
    Kind,
    describe,
    detect,
    looks_like_html,
)

log = logging.getLogger(__name__)

__all__ = ["SUPPORTED_SUFFIXES", "read_file", "readable_kind"]


def readable_kind(path: Path) -> Kind:
    """The kind a file is read as: its content's, checked against its extension. An `InputError`
    says why a file cannot be read at all (empty, binary, a zip that is not a .docx, ...)."""
    try:
        if path.stat().st_size == 0:
            raise InputError(f"{path}: an empty file (0 bytes); nothing indexed for it")
        kind = detect(path)
    except OSError as e:
        raise InputError(f"{path}: cannot read it ({e.strerror or e})") from e
    claimed = SUFFIX_KIND.get(path.suffix.lower())
    if claimed == "html" and kind == "text":
        with path.open("rb") as f:
            kind = "html" if looks_like_html(f.read(8192)) else "text"
    if kind in ("binary", "zip", "empty"):
        what = f"not {describe(claimed)} as its extension says" if claimed else "unsupported"
        raise InputError(f"{path}: {describe(kind)}, {what}; nothing indexed for it")
    if claimed is None and kind == "text":
        raise InputError(
            f"{path}: unsupported file type (use {', '.join(sorted(SUPPORTED_SUFFIXES))})"
        )
    if claimed is not None and kind != claimed:
        log.warning(
            "%s: the extension says %s but the content is %s; reading it as such",
            path,
            describe(claimed),
            describe(kind),
        )
    return kind


def read_file(path: Path, doc_id: str, source: str) -> list[Document]:
    """The documents in the file at `path`; an `InputError` (one line, naming the file) if it
    cannot be read. Any reader failure becomes that error: one bad file never stops a folder."""
    kind = readable_kind(path)
    try:
        if kind == "pdf":
            from terag_neo4j.indexing.readers.pdf import read_pdf

            return [read_pdf(path, doc_id, source)]
        if kind == "docx":
            from terag_neo4j.indexing.readers.docx import read_docx

            return [read_docx(path, doc_id, source)]
        if kind == "html":
            from terag_neo4j.indexing.readers.html import read_html

            return [read_html(path, doc_id, source)]
        from terag_neo4j.indexing.readers.text import read_text_file

        return read_text_file(path, doc_id, path.suffix.lower() in JSONL_SUFFIXES, source)
    except InputError:
        raise
    except MemoryError:
        # A process with a memory cap (the service's parsing workers) reaches it here
        from terag_neo4j.indexing.readers.common import TooLarge

        raise TooLarge(
            f"{path}: reading it needs more memory than this process may use; split it into "
            "smaller files"
        ) from None
    except Exception as e:  # a library's own error types for a file it chokes on, deep inside
        # it: this file is reported and skipped, the rest of the folder is still indexed
        from terag_neo4j.indexing.readers.common import one_line

        raise InputError(
            f"{path}: cannot read it as {describe(kind)} ({type(e).__name__}: {one_line(e)})"
        ) from e
