"""HTML: the main content as Markdown-like text (headings as `#` lines), without navigation,
headers, footers and other boilerplate."""

from __future__ import annotations

import logging
import re
from html.parser import HTMLParser
from pathlib import Path

from terag_neo4j.core.documents import Document, InputError
from terag_neo4j.indexing.readers import common
from terag_neo4j.indexing.readers.common import TooLarge, check_size, one_line, require

log = logging.getLogger(__name__)
_SKIP = {"head", "title", "script", "style", "noscript", "nav", "header", "footer", "aside",
         "form", "template", "svg", "button", "select", "iframe"}  # fmt: skip
_BLOCK = {"p", "div", "li", "tr", "br", "section", "article", "main", "table", "ul", "ol",
          "pre", "blockquote", "dd", "dt", "figcaption"}  # fmt: skip
_HEADING = re.compile(r"h([1-6])")
# Dropped before extraction: trafilatura keeps a page's banner when the article is short.
_BOILERPLATE = (
    "//nav",
    "//aside",
    "//header[not(ancestor::article or ancestor::main)]",
    "//footer[not(ancestor::article or ancestor::main)]",
)
_HEADING_TAG = re.compile(r"<h[1-6][\s>]", re.I)
_MD_HEADING = re.compile(r"^#{1,6} ", re.M)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)


def read_html(path: Path, doc_id: str, source: str) -> Document:
    # Before reading: parsing a page holds many times its size
    size, limit = path.stat().st_size, common.MAX_HTML_BYTES
    if size > limit:
        raise TooLarge(
            f"{path}: {size:,} bytes of HTML, beyond the {limit:,}-byte limit of a page; "
            "split it into smaller files"
        )
    data = path.read_bytes()
    html = _decode(data)
    check_size(path, len(html) // 4)  # markup is mostly tags; the text is checked again below
    trafilatura = require("trafilatura")
    try:
        text = trafilatura.extract(
            html,
            output_format="markdown",
            include_tables=True,
            include_comments=False,
            include_images=False,
            include_links=False,
            deduplicate=False,
            prune_xpath=list(_BOILERPLATE),
        )
    except Exception as e:  # a page trafilatura cannot parse is read by the plain extractor
        log.debug("%s: trafilatura failed (%s); using the plain extractor", path, one_line(e))
        text = None
    if not text or not text.strip() or (_HEADING_TAG.search(html) and not _MD_HEADING.search(text)):
        # A short page falls below trafilatura's minimum size for "main content", and its
        # fallback keeps navigation and drops headings: the plain extractor keeps the structure.
        text = plain_text(html) or text or ""
    text = _tidy(text)
    check_size(path, len(text))
    if not text.strip():
        raise InputError(f"{path}: an HTML page without any text; nothing indexed for it")
    first, _, rest = text.partition("\n")
    if first.startswith("# "):
        return Document(id=doc_id, text=rest.strip("\n"), title=first[2:].strip(), source=source)
    title = _page_title(html)
    return Document(
        id=doc_id,
        text=text,
        title=title or path.stem.replace("_", " ").strip(),
        source=source,
        title_is_name=bool(title),
    )


def _decode(data: bytes) -> str:
    m = re.search(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_-]+)", data[:4096], re.I)
    for encoding in ("utf-8-sig", m.group(1).decode() if m else "", "cp1252"):
        if not encoding:
            continue
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode("latin-1")  # every byte is a character: nothing is refused


def _page_title(html: str) -> str:
    m = _TITLE.search(html[:65536])
    return " ".join(_unescape(m.group(1)).split()) if m else ""


def _unescape(text: str) -> str:
    import html as html_lib

    return html_lib.unescape(text)


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


class _Text(HTMLParser):
    """Visible text outside boilerplate elements; headings become `#` lines."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
        elif m := _HEADING.fullmatch(tag):
            self.out.append("\n\n" + "#" * int(m.group(1)) + " ")
        elif tag in _BLOCK:
            self.out.append("\n\n" if tag != "br" else "\n")
        elif tag in ("td", "th"):
            self.out.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif _HEADING.fullmatch(tag) or tag in _BLOCK:
            self.out.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.skip and data.strip():
            self.out.append(" ".join(data.split()) + (" " if data[-1:].isspace() else ""))


def plain_text(html: str) -> str:
    """The page's text by the standard library's parser (for pages too small for trafilatura)."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    body = "".join(parser.out)
    return "\n".join(line.strip() for line in body.split("\n"))
