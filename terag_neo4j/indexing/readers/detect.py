"""What a file is, from its first bytes: the extension only says what it claims to be."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Literal

Kind = Literal["pdf", "docx", "html", "text", "empty", "zip", "binary"]

PDF_SUFFIXES = {".pdf"}
DOCX_SUFFIXES = {".docx"}
HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
SUFFIX_KIND: dict[str, Kind] = {
    **{s: "pdf" for s in PDF_SUFFIXES},
    **{s: "docx" for s in DOCX_SUFFIXES},
    **{s: "html" for s in HTML_SUFFIXES},
    **{s: "text" for s in TEXT_SUFFIXES | JSONL_SUFFIXES},
}
SUPPORTED_SUFFIXES = frozenset(SUFFIX_KIND)
SNIFF_BYTES = 8192
# A page that says it is HTML at its start; deeper tags in a Markdown file are just Markdown.
_HTML_START = re.compile(
    rb"^\s*(<\?xml[^>]*>\s*)?(<!--.*?-->\s*)*<(!doctype\s+html|html)[\s>]", re.I | re.S
)
_HTML_TAG = re.compile(rb"<(html|head|body|title|p|div|h[1-6])[\s>]", re.I)


def sniff(head: bytes, is_zip: bool = False, has_word_xml: bool = False) -> Kind:
    """The kind of content that starts with `head` (at most `SNIFF_BYTES` of it)."""
    if not head:
        return "empty"
    if b"%PDF-" in head[:1024]:  # the PDF header may follow up to 1 KB of junk
        return "pdf"
    if head.startswith(b"PK\x03\x04") or is_zip:
        return "docx" if has_word_xml else "zip"
    body = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    if _HTML_START.match(body):
        return "html"
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "binary"
    return "text"


def detect(path: Path) -> Kind:
    """The kind of content of the file at `path` (read: its first bytes, a zip's member list)."""
    with path.open("rb") as f:
        head = f.read(SNIFF_BYTES)
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as z:
                names = set(z.namelist())
        except (zipfile.BadZipFile, OSError):
            return "binary"
        return sniff(head, True, "word/document.xml" in names)
    return sniff(head)


def looks_like_html(head: bytes) -> bool:
    """HTML tags near the start: enough for a file that claims to be HTML."""
    return bool(_HTML_TAG.search(head))


def describe(kind: Kind) -> str:
    return {
        "pdf": "a PDF",
        "docx": "a Word (.docx) document",
        "html": "an HTML page",
        "text": "text",
        "empty": "empty",
        "zip": "a zip archive (not a .docx)",
        "binary": "binary data",
    }[kind]
