"""Word (.docx): headings as `#` lines, paragraphs, tables as text (a row a line, cells
separated by ` | `), in document order. A .docx has no fixed pages: passages get none."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from terag_neo4j.indexing.inputs import Document, InputError
from terag_neo4j.indexing.readers.common import check_size, one_line, require

_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.I)


def read_docx(path: Path, doc_id: str, source: str) -> Document:
    docx = require("docx")
    try:
        doc = docx.Document(str(path))
        title = str(doc.core_properties.title or "").strip()
        blocks = list(_blocks(doc))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        raise InputError(f"{path}: not a readable .docx ({one_line(e)})") from e
    except Exception as e:  # python-docx and lxml raise their own types for broken parts
        raise InputError(f"{path}: not a readable .docx ({type(e).__name__}: {one_line(e)})") from e
    if blocks and blocks[0].startswith("# ") and not title:
        title = blocks.pop(0)[2:].strip()
    elif blocks and title and blocks[0] == f"# {title}":
        blocks.pop(0)
    text = "\n\n".join(blocks)
    check_size(path, len(text))
    if not text.strip():
        raise InputError(f"{path}: a .docx without any text; nothing indexed for it")
    return Document(
        id=doc_id,
        text=text,
        title=title or path.stem.replace("_", " ").strip(),
        source=source,
        title_is_name=bool(title),
    )


def _blocks(doc: Any) -> list[str]:
    from docx.table import Table

    out = []
    for item in doc.iter_inner_content():
        if isinstance(item, Table):
            rows = [_row(r) for r in item.rows]
            text = "\n".join(r for r in rows if r)
        else:
            text = _paragraph(item)
        if text.strip():
            out.append(text)
    return out


def _paragraph(p: Any) -> str:
    text = " ".join(p.text.split())
    style = str(getattr(p.style, "name", "") or "")
    if not text:
        return ""
    if style.lower() == "title":
        return f"# {text}"
    if m := _HEADING_STYLE.fullmatch(style.strip()):
        return "#" * min(int(m.group(1)) + 1, 6) + " " + text
    return text


def _row(row: Any) -> str:
    cells: list[str] = []
    for cell in row.cells:
        text = " ".join(cell.text.split())
        if text and (not cells or cells[-1] != text):  # a merged cell repeats in each column
            cells.append(text)
    return " | ".join(cells)
