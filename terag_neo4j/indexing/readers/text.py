"""Plain text, Markdown and JSON Lines files as documents."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from terag_neo4j.core import documents as inputs
from terag_neo4j.core.documents import Document, InputError, absolute, content_hash
from terag_neo4j.indexing.readers.common import TooLarge


def _too_large(path: Path, size: str) -> None:
    raise TooLarge(
        f"{path}: {size}, over the {inputs.MAX_DOCUMENT_CHARS:,}-character limit of a document; "
        "split it into smaller files"
    )


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(
            f"{path}: not valid UTF-8 (byte {e.start}: {data[e.start : e.start + 4]!r}); "
            "re-encode it as UTF-8"
        ) from e


def jsonl_records(lines: Iterable[str], source: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; `InputError` names the file and line."""
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{source}:{lineno}: invalid JSON ({e.msg})") from e
        if not isinstance(rec, dict):
            raise InputError(f"{source}:{lineno}: expected a JSON object")
        yield lineno, rec


def _jsonl_documents(path: Path, text: str, source: str) -> Iterator[Document]:
    for lineno, rec in jsonl_records(text.splitlines(), path):
        if not isinstance(rec.get("text"), str):
            raise InputError(f"{path}:{lineno}: each line needs an object with a string 'text'")
        title = str(rec.get("title") or "")
        doc_id = str(rec.get("id") or content_hash(f"{title}\n{rec['text']}"))
        # A record is one passage unless it is longer than one: then it is chunked like a file.
        yield Document(id=doc_id, title=title, text=rec["text"], source=f"{source}:{lineno}")


def _title_and_body(path: Path, text: str) -> tuple[str, str, bool]:
    """A leading Markdown heading is the title (and names the content); otherwise the file
    name is (and names nothing)."""
    first, _, rest = text.lstrip().partition("\n")
    if first.startswith("# "):
        return first.lstrip("#").strip(), rest.strip(), True
    return path.stem.replace("_", " ").strip(), text, False


def read_text_file(
    path: Path, doc_id: str, jsonl: bool, source: str | None = None
) -> list[Document]:
    """A text or Markdown file as one document, a JSON Lines file as one per record (`source`,
    default the file's absolute path, is each record's with `:line` after it)."""
    source = source or absolute(path)
    if not jsonl and path.stat().st_size > 4 * inputs.MAX_DOCUMENT_CHARS:
        _too_large(path, f"{path.stat().st_size:,} bytes")
    text = _read_text(path)
    if jsonl:  # many documents, checked one by one
        # Parse the whole file first: a bad line late in it must not leave a half-read file.
        return list(_jsonl_documents(path, text, source))
    if len(text) > inputs.MAX_DOCUMENT_CHARS:
        _too_large(path, f"{len(text):,} characters")
    title, text, named = _title_and_body(path, text)
    return [Document(id=doc_id, title=title, text=text, source=source, title_is_name=named)]
