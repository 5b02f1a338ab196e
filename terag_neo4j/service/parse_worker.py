"""One parsing worker process of the service (`parsing.ParsePool` starts it with `python -m`):
reads uploaded files with the readers `terag index` uses, one request at a time, under a cap
on its address space, so a file that needs too much memory fails here and never grows the
service process.

The protocol, on stdin and stdout (anything else printed goes to stderr): each frame is a
4-byte header length and an 8-byte body length (big-endian), a JSON header, then the body. The
worker first sends `{"ready": true}`. A request is `{"path", "name", "max_chars", "max_docs",
"cap", "max_id", "max_title"}` (`max_docs`: the documents this file may still add to its upload,
of the `cap` one upload may hold); the answer is `{"docs": [...], "log": [...], "rss": bytes}`
with the documents' texts, UTF-8, one after another in the body (each document's `"size"` says
how many bytes are its), or `{"error", "too_large", "status", "log", "rss"}`.

A request `{"kind": "texts", "max_chars"}` carries a JSON body of the texts route
(`TextsRequest`) as its body: the worker decodes and validates it and answers `{"ok": true}`,
`{"invalid": [pydantic's errors, without the input]}` or `{"error", "status": 413}` for a text
over `max_chars`. Decoding 32 MiB holds a GIL for 0.05 s of CPU in one native call (up to a
second of wall time on a loaded machine): a body refused here never holds the service's.
A worker started with `texts` as its second argument imports no readers.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
import resource
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

from terag_neo4j.errors import TeragError, echo

FRAME = struct.Struct(">IQ")
# A worker's lines for one request, sent back for the service to log; a file that makes a
# library warn on every page must not flood the service's log
MAX_LOG_RECORDS = 20


def send(out: BinaryIO, header: dict[str, Any], body: bytes = b"") -> None:
    raw = json.dumps(header).encode()
    out.write(FRAME.pack(len(raw), len(body)) + raw)
    out.write(body)
    out.flush()


def _recv(inp: BinaryIO) -> tuple[dict[str, Any], bytes] | None:
    head = inp.read(FRAME.size)
    if len(head) < FRAME.size:
        return None  # the service closed the pipe: it stopped, or let this worker go
    n, body = FRAME.unpack(head)
    request: dict[str, Any] = json.loads(inp.read(n))
    return request, inp.read(body)


class _Kept(logging.Handler):
    """The records of the request being read, for its answer."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[tuple[int, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) < MAX_LOG_RECORDS:
            self.records.append((record.levelno, record.name, record.getMessage()))


def _preload() -> None:
    """The readers and their libraries, imported before the first request: a request then costs
    its parse only."""
    import terag_neo4j.indexing.readers  # noqa: F401
    from terag_neo4j.indexing.readers import common

    for module in ("pypdf", "docx", "trafilatura"):
        # One not installed: a file of that format gets the reader's own message
        with contextlib.suppress(common.MissingReader):
            common.require(module)
    for name in ("pdf", "docx", "html", "text"):
        __import__(f"terag_neo4j.indexing.readers.{name}")


class _Refused(TeragError):
    """A file past one of an upload's bounds (documents, id or title length): `status` is the
    HTTP status the service answers with."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _too_many(name: str, request: dict[str, Any]) -> _Refused:
    left, cap = int(request["max_docs"]), int(request["cap"])
    room = f"the {cap:,}" if left >= cap else f"the {left:,} left of the {cap:,}"
    return _Refused(
        f"{name}: over {room} documents one upload may hold; split it into smaller uploads",
        413,
    )


# A line with something on it: a record of a JSON Lines file
_RECORD = re.compile(rb"(?m)^[^\S\n]*\S")


def _check_text(path: Path, name: str, jsonl: bool, request: dict[str, Any]) -> None:
    """An upload read as text must be UTF-8 text throughout, not only in its first bytes; a
    JSON Lines file is refused by its count of records before any is parsed."""
    from terag_neo4j.core.documents import InputError

    data = path.read_bytes()
    if b"\x00" in data:
        raise InputError(f"{name}: binary content; upload UTF-8 text")
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: not valid UTF-8 (byte {e.start}); re-encode it") from None
    if jsonl:
        # Counted up to one past the bound only: a file of millions of lines costs no more
        # than one of 10,000 (the reader's own count, after parsing, is checked again)
        records = _RECORD.finditer(data)
        if sum(1 for _ in itertools.islice(records, int(request["max_docs"]) + 1)) > int(
            request["max_docs"]
        ):
            raise _too_many(name, request)


def _shown(value: str) -> str:
    """A short, escaped prefix of a caller's string, for a one-line message."""
    return ascii(value[:40]) + ("..." if len(value) > 40 else "")


def _check_documents(name: str, docs: list[Any], request: dict[str, Any]) -> None:
    if len(docs) > int(request["max_docs"]):
        raise _too_many(name, request)
    max_id, max_title = int(request["max_id"]), int(request["max_title"])
    for d in docs:
        if len(d.id) > max_id:
            raise _Refused(
                f"{name}: document id {_shown(d.id)} has {len(d.id):,} characters, over the "
                f"{max_id:,} limit of an id",
                422,
            )
        if len(d.title) > max_title:
            raise _Refused(
                f"{name}: document {_shown(d.id)}: its title has {len(d.title):,} characters, "
                f"over the {max_title:,} limit of a title",
                422,
            )


def read(request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """The answer to one request (see the module doc)."""
    from terag_neo4j.core import documents as inputs
    from terag_neo4j.indexing.readers import read_file, readable_kind
    from terag_neo4j.indexing.readers.common import TooLarge, one_line
    from terag_neo4j.indexing.readers.detect import JSONL_SUFFIXES

    path, name = Path(request["path"]), str(request["name"])
    inputs.MAX_DOCUMENT_CHARS = int(request["max_chars"])
    try:
        if readable_kind(path) == "text":
            _check_text(path, name, path.suffix.lower() in JSONL_SUFFIXES, request)
        docs = read_file(path, name, name)
        _check_documents(name, docs, request)
    except _Refused as e:
        return {"error": str(e), "status": e.status}, b""
    except inputs.InputError as e:
        return {"error": str(e), "too_large": isinstance(e, TooLarge)}, b""
    except MemoryError:
        return {
            "error": f"{path}: reading it needs more memory than a parsing worker may use; "
            "split it into smaller files",
            "too_large": True,
            "exit": True,  # after a MemoryError the heap may be in pieces: start afresh
        }, b""
    except Exception as e:  # a reader's bug must cost this file, not the worker
        return {"error": f"{path}: cannot read it ({type(e).__name__}: {one_line(e)})"}, b""
    return _answer(docs)


def texts(request: dict[str, Any], payload: bytes) -> tuple[dict[str, Any], bytes]:
    """The answer to a `texts` request: the documents of a JSON body of the texts route."""
    from pydantic import ValidationError

    from terag_neo4j.core import documents as inputs
    from terag_neo4j.service.schemas import TextsRequest

    try:
        body = TextsRequest.model_validate_json(payload)
    except ValidationError as e:
        # The caller's input is not kept: a 32 MiB string must not travel back in an error
        errors = e.errors(include_input=False, include_url=False, include_context=False)
        return {"invalid": json.loads(json.dumps(errors, default=str))}, b""
    except MemoryError:
        return {
            "error": "the request body needs more memory than decoding may use",
            "exit": True,
        }, b""
    # A text over the service's limit is refused here (the route's own message): the attack
    # of 64 bodies of one 32 MiB text then costs the service no string of it at all
    limit = int(request.get("max_chars", inputs.MAX_DOCUMENT_CHARS))
    for d in body.documents:
        if len(d.text) > limit:
            return {
                "error": f"document {echo(d.id)} has {len(d.text):,} characters, over the "
                f"{limit:,} limit; split it",
                "status": 413,
            }, b""
    # Valid: the service decodes it itself (sending 32 MiB of texts back, and making strings
    # of them there, held its GIL longer than pydantic's decode)
    return {"ok": True}, b""


def _answer(docs: list[Any]) -> tuple[dict[str, Any], bytes]:
    """Documents as a header and one body of their texts, UTF-8, one after another."""
    texts = [d.text.encode("utf-8", "surrogatepass") for d in docs]
    meta = [
        {
            "id": d.id,
            "title": d.title,
            "source": d.source,
            "is_passage": d.is_passage,
            "title_is_name": d.title_is_name,
            "pages": list(d.pages),
            "size": len(t),
        }
        for d, t in zip(docs, texts, strict=True)
    ]
    return {"docs": meta}, b"".join(texts)


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def main(argv: list[str]) -> None:
    memory = int(argv[0]) if argv else 0
    if memory:  # address space, not resident memory: what a parse may ever map
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    inp = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a library's print must not corrupt a frame
    kept = _Kept()
    logging.getLogger().addHandler(kept)
    logging.getLogger().setLevel(logging.WARNING)
    if argv[1:] != ["texts"]:
        _preload()
    send(out, {"ready": True})
    while (got := _recv(inp)) is not None:
        kept.records.clear()
        request, payload = got
        header, body = texts(request, payload) if request.get("kind") == "texts" else read(request)
        header.update(log=kept.records, rss=_rss())
        send(out, header, body)
        if header.get("exit"):
            return


if __name__ == "__main__":
    # The service stopping (Ctrl-C reaches its whole process group) or letting this worker go
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        main(sys.argv[1:])
