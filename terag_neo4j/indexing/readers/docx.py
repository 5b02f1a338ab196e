"""Word (.docx): headings as `#` lines, paragraphs, tables as text (a row a line, cells
separated by ` | `), in document order. A .docx has no fixed pages: passages get none."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from terag_neo4j.core.documents import Document, InputError
from terag_neo4j.indexing.readers import common
from terag_neo4j.indexing.readers.common import TooLarge, check_size, one_line, require

_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.I)


def read_docx(path: Path, doc_id: str, source: str) -> Document:
    docx = require("docx")
    try:
        check_package(path)
    except TooLarge:
        raise
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise InputError(f"{path}: not a readable .docx ({one_line(e)})") from e
    try:
        doc = docx.Document(str(path))
        title = str(doc.core_properties.title or "").strip()
        blocks = list(_blocks(doc))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        raise InputError(f"{path}: not a readable .docx ({one_line(e)})") from e
    except MemoryError:
        raise
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


def check_package(path: Path) -> None:
    """Refuse a .docx that inflates beyond the limits before python-docx reads it (it inflates
    every part whole, then parses the XML ones). The sizes a zip declares are enough: `zipfile`,
    python-docx's too, never inflates a member past its declared size (it stops there and fails
    the CRC check), so a member that lies about its size is a broken file, not a larger one."""
    limit, ratio, ratio_from = common.MAX_ZIP_INFLATED, common.MAX_ZIP_RATIO, common.ZIP_RATIO_FROM
    with zipfile.ZipFile(path) as z:
        members = z.infolist()
        if len(members) > common.MAX_ZIP_MEMBERS:
            raise TooLarge(
                f"{path}: {len(members):,} parts in the .docx, beyond the limit of "
                f"{common.MAX_ZIP_MEMBERS:,}; nothing indexed for it"
            )
        total = 0
        for m in members:
            total += m.file_size
            if total > limit:
                raise TooLarge(
                    f"{path}: the .docx inflates to over {total:,} bytes, beyond the {limit:,}-byte "
                    "limit; split it into smaller files (nothing indexed for it)"
                )
            if m.file_size > ratio_from and m.file_size > ratio * max(m.compress_size, 1):
                raise TooLarge(
                    f"{path}: {m.filename[:80]!a} in the .docx is compressed "
                    f"{m.file_size // max(m.compress_size, 1):,}:1, beyond the {ratio}:1 limit "
                    "(a zip bomb?); nothing indexed for it"
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
