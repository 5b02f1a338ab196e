"""Uploaded files are read in a small pool of worker processes, never on the event loop.

A PDF, .docx or HTML page of 32 MiB takes seconds to minutes of pure Python to read; on the
event loop that would stall every request (health checks and MCP included), and in a thread it
would hold the GIL just the same. So each file goes to a warm worker process
(`parse_worker`): it has the readers and their libraries imported already, runs under a cap on
its address space (a file that needs more fails there, the service's memory never grows), and
is killed and replaced when a file takes longer than `TERAG_PARSE_TIMEOUT_S`. The pool's size
(`TERAG_PARSE_WORKERS`) bounds the parses running at once; a few more uploads may wait for a
worker (`queue_timeout_s` at most, then 503), and beyond those an upload gets 429, both with
Retry-After. A worker is replaced after many files, or when reading one left it large.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import select
import shutil
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from terag_neo4j.errors import TeragError
from terag_neo4j.service.admission import Admission
from terag_neo4j.service.auth import CALLER
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.parse_worker import FRAME
from terag_neo4j.service.schemas import MAX_DOCUMENTS, MAX_ID_CHARS, MAX_TITLE_CHARS

if TYPE_CHECKING:
    from terag_neo4j.core.documents import Document

log = logging.getLogger(__name__)

GiB = 1024**3
# What one parse may map: a 32 MiB HTML page peaks near 1 GiB in lxml and trafilatura
MEMORY_BYTES = 2 * GiB
# Uploads that may wait for a worker, for each worker
WAITING_PER_WORKER = 4
# A worker is replaced after this many files, or when one left it this large (freed memory
# stays with the process)
MAX_FILES_PER_WORKER = 200
MAX_IDLE_RSS = 512 * 1024**2
PIPE_BYTES = 1024 * 1024  # Linux's default most for an unprivileged process
# A worker imports pypdf, python-docx and trafilatura before it says it is ready
START_TIMEOUT_S = 120.0
# The environment a worker gets, by name: it reads hostile files, so it is told nothing it does
# not need to run Python (no Neo4j credentials or URIs, no key file's path, no cloud tokens)
_WORKER_ENV = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONDONTWRITEBYTECODE",
        "VIRTUAL_ENV",
        "SYSTEMROOT",
    }
)


class _Gone(TeragError):
    """The worker ended (killed for its time, or crashed) before it answered."""


class _Late(TeragError):
    """The worker did not answer within its time."""


def _worker_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in _WORKER_ENV or k.startswith("LC_")}


class Worker:
    """One worker process and its pipes; used by one thread at a time."""

    def __init__(self, memory_bytes: int, kind: str = "files") -> None:
        self.kind = kind
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "terag_neo4j.service.parse_worker", str(memory_bytes), kind],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_worker_env(),
            close_fds=True,
        )
        for pipe in (self.proc.stdin, self.proc.stdout):
            # A body of 32 MiB through the default 64 KiB pipe was 512 hand-overs between the
            # processes each way, each waiting for a core on a loaded machine
            with contextlib.suppress(OSError, AttributeError):
                fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[union-attr]
        self.ready = False
        self.files = 0
        self.rss = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read(self, n: int, deadline: float) -> bytearray:
        """`n` bytes from the worker, read into one buffer by calls that release the GIL (no
        copy of a 32 MiB answer holds the event loop)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise _Late
            k = os.readv(fd, [view[got:]])
            if not k:
                raise _Gone
            got += k
        return buf

    def _frame(self, deadline: float) -> tuple[dict[str, Any], bytearray]:
        n, size = FRAME.unpack(self._read(FRAME.size, deadline))
        header: dict[str, Any] = json.loads(self._read(n, deadline))
        return header, self._read(size, deadline)

    def call(
        self, request: dict[str, Any], timeout_s: float, payload: Sequence[bytes] = ()
    ) -> tuple[dict[str, Any], bytearray]:
        """The worker's answer to `request` (with the chunks of `payload` as its body); `_Late`
        past `timeout_s` (the start of a fresh worker not counted), `_Gone` if it ended
        first."""
        if not self.ready:
            self._frame(time.monotonic() + START_TIMEOUT_S)
            self.ready = True
        raw = json.dumps(request).encode()
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(FRAME.pack(len(raw), sum(map(len, payload))) + raw)
            for chunk in payload:  # as received: never joined into one copy
                self.proc.stdin.write(chunk)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _Gone from None
        header, body = self._frame(time.monotonic() + timeout_s)
        self.files += 1
        self.rss = int(header.get("rss", 0))
        return header, body

    def stop(self) -> None:
        if self.alive():
            self.proc.kill()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            log.warning("parsing worker %d did not stop when killed", self.pid)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


class ParsePool:
    """`workers` warm worker processes; `read` sends one file to one of them, admitted as
    retrievals are (`Admission`): with several keys (`shared`), one key's uploads hold at most
    half the workers, so a key sending slow files leaves the others a worker to read theirs."""

    def __init__(
        self,
        workers: int,
        timeout_s: float,
        wait_s: float,
        memory_bytes: int = MEMORY_BYTES,
        waiting: int | None = None,
        shared: bool = False,
        kind: str = "files",
    ) -> None:
        self.workers = workers
        self.kind = kind  # "texts": workers that decode JSON bodies only (no readers loaded)
        self.timeout_s = timeout_s
        self.memory_bytes = memory_bytes
        self.admission = Admission(
            workers,
            WAITING_PER_WORKER * workers if waiting is None else waiting,
            wait_s,
            shared,
            what="uploaded files",
            threads="terag-parse",
        )
        self._idle: list[Worker] = []
        self._busy: set[Worker] = set()
        self._lock = threading.Lock()
        self._closed = False

    def start(self) -> None:
        """Start the workers now, so the first upload finds them ready."""
        with self._lock:
            while len(self._idle) < self.workers:
                self._idle.append(Worker(self.memory_bytes, self.kind))

    def pids(self) -> list[int]:
        with self._lock:
            return [w.pid for w in [*self._idle, *self._busy]]

    async def read(self, path: Path, name: str, max_docs: int = MAX_DOCUMENTS) -> list[Document]:
        """The documents in the uploaded file at `path`, named `name` (at most `max_docs`:
        what is left of the upload's cap), counted against the calling key; a `ServiceError`
        (413 past a limit, 415 unreadable, 422 an id or title too long, 429/503 when the pool
        is busy) otherwise."""
        who = CALLER.get()
        return await self.admission.run(
            lambda: self._read(path, name, max_docs), who.name if who else ""
        )

    def _take(self) -> Worker:
        with self._lock:
            if self._closed:
                raise ServiceError(503, "the service is stopping; retry later")
            while self._idle:
                w = self._idle.pop()
                if w.alive():
                    self._busy.add(w)
                    return w
                w.stop()
            w = Worker(self.memory_bytes, self.kind)
            self._busy.add(w)
            return w

    def _give_back(self, w: Worker, keep: bool) -> None:
        keep = keep and w.files < MAX_FILES_PER_WORKER and w.rss < MAX_IDLE_RSS and w.alive()
        with self._lock:
            self._busy.discard(w)
            if keep and not self._closed:
                self._idle.append(w)
                return
        w.stop()
        with self._lock:  # a fresh one, warming up for the next file
            if not self._closed and len(self._idle) + len(self._busy) < self.workers:
                self._idle.append(Worker(self.memory_bytes, self.kind))

    def _read(self, path: Path, name: str, max_docs: int) -> list[Document]:
        from terag_neo4j.core import documents as inputs

        request = {
            "path": str(path),
            "name": name,
            "max_chars": inputs.MAX_DOCUMENT_CHARS,
            "max_docs": max_docs,
            "cap": MAX_DOCUMENTS,
            "max_id": MAX_ID_CHARS,
            "max_title": MAX_TITLE_CHARS,
        }
        w = self._take()
        keep = False
        try:
            header, body = w.call(request, self.timeout_s)
            keep = not header.get("exit")
        except _Late:
            raise ServiceError(
                413,
                f"{name}: reading it took over {self.timeout_s:g} s, the limit of a file "
                "(TERAG_PARSE_TIMEOUT_S); split it into smaller files",
            ) from None
        except _Gone:
            try:
                code = w.proc.wait(5)
            except subprocess.TimeoutExpired:
                code = None
            raise ServiceError(
                415, f"{name}: cannot read it (the parsing worker ended with status {code})"
            ) from None
        finally:
            self._give_back(w, keep)
        for level, logger, message in header.get("log", []):
            logging.getLogger(logger).log(level, "%s", message.replace(str(path), name))
        if "error" in header:
            # The message names the temporary copy: name the upload instead
            message = str(header["error"]).replace(str(path), name)
            status = header.get("status") or (413 if header.get("too_large") else 415)
            raise ServiceError(int(status), message)
        return _documents(header["docs"], body)

    def check_texts(self, chunks: Sequence[bytes]) -> dict[str, Any]:
        """A JSON body of the texts route (`chunks`, in order) decoded and checked by a worker,
        in the calling thread (the caller admits it): {"ok": True} or {"invalid": errors}; a
        `ServiceError` (413) for a text over the limit."""
        from terag_neo4j.core.documents import MAX_DOCUMENT_CHARS

        w = self._take()
        keep = False
        try:
            request = {"kind": "texts", "max_chars": MAX_DOCUMENT_CHARS}
            header, _ = w.call(request, self.timeout_s, chunks)
            keep = not header.get("exit")
        except (_Late, _Gone):
            raise ServiceError(
                413,
                f"decoding the request body took over {self.timeout_s:g} s or more memory "
                "than it may use; send fewer or smaller documents a request",
            ) from None
        finally:
            self._give_back(w, keep)
        if "error" in header:
            raise ServiceError(int(header.get("status", 413)), str(header["error"]))
        return {"invalid": header["invalid"]} if "invalid" in header else {"ok": True}

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers = [*self._idle, *self._busy]
            self._idle.clear()
        for w in workers:
            w.stop()
        self.admission.close()


def _documents(meta: list[dict[str, Any]], body: bytearray) -> list[Document]:
    from terag_neo4j.core.documents import Document

    docs, at = [], 0
    view = memoryview(body)
    for m in meta:
        size = int(m["size"])
        text = str(view[at : at + size], "utf-8", "surrogatepass")
        at += size
        docs.append(
            Document(
                id=m["id"],
                text=text,
                title=m["title"],
                source=m["source"],
                is_passage=bool(m["is_passage"]),
                title_is_name=bool(m["title_is_name"]),
                pages=tuple(int(p) for p in m["pages"]),
            )
        )
    return docs


def upload_names(raw: Sequence[str | None]) -> list[str]:
    """The uploaded files' names, each checked (it becomes a document id and a file name on
    disk), and unique; a `ServiceError` with a one-line reason otherwise."""
    from terag_neo4j.indexing.readers import SUPPORTED_SUFFIXES

    names: list[str] = []
    for given in raw:
        name = re.split(r"[/\\]", given or "")[-1]  # a browser may send a client-side path
        shown = ascii(name[:60]) + ("..." if len(name) > 60 else "")
        if name in ("", ".", ".."):
            raise ServiceError(422, "a file without a name: give each file one, e.g. notes.md")
        if any(unicodedata.category(c) in ("Cc", "Cs") for c in name):
            raise ServiceError(422, f"file name {shown}: control characters; rename the file")
        if len(name.encode("utf-8")) > 255:
            raise ServiceError(422, f"file name {shown}: over 255 bytes; rename the file")
        if Path(name).suffix.lower() not in SUPPORTED_SUFFIXES:
            supported = ", ".join(sorted(SUPPORTED_SUFFIXES))
            raise ServiceError(415, f"{name}: unsupported file type (use {supported})")
        if name in names:
            raise ServiceError(
                422, f"{name}: uploaded twice; every file in an upload needs its own name"
            )
        names.append(name)
    return names


def save_upload(src: IO[bytes], path: Path) -> None:
    """An upload's content at `path` (call in a thread: it may be 32 MiB)."""
    src.seek(0)
    with path.open("wb") as out:
        shutil.copyfileobj(src, out, 1024 * 1024)
