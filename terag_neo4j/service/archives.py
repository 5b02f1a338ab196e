"""Namespace archives over HTTP: the spool that received imports wait in, and the bound on
exports streaming at once.

An archive sent to `POST /v1/namespaces/{ns}/import` may be gigabytes, so it never enters
memory: it streams into a file in the spool (`TERAG_HOME/spool`), capped at
TERAG_MAX_ARCHIVE_BYTES, is verified there whole (every member's checksum, size and rows, the
target's embedding identity) before the job exists, and stays there until its import job ends.
The job records the file's name and the host whose spool holds it: processes on one machine
share TERAG_HOME, and a worker on another machine leaves the job to them.

An export holds a Neo4j session for as long as its client reads, so a process streams at most
`EXPORTS` at once, and with several keys one key at most half of them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terag_neo4j.service.http_errors import ServiceError

if TYPE_CHECKING:
    from fastapi import Request

    from terag_neo4j.store import GraphStore

log = logging.getLogger(__name__)

EXPORTS = 2  # exports streaming at once per process
# Free disk an import leaves besides its archive, so a spool filling up fails the upload, not
# Neo4j's own writes on the same disk
DISK_RESERVE_BYTES = 1024**3
PART_S = 3600  # a received file no job took in this long was left by a process that died


def host() -> str:
    return socket.gethostname()


def spool_dir(home: Path) -> Path:
    spool = home / "spool"
    spool.mkdir(parents=True, exist_ok=True, mode=0o700)
    return spool


def new_job_id() -> str:
    return uuid.uuid4().hex[:16]


def archive_name(job_id: str) -> str:
    return f"{job_id}.zip"


def check_room(spool: Path, length: int) -> None:
    """507 when the spool's disk cannot take `length` bytes and keep its reserve."""
    free = shutil.disk_usage(spool).free
    if free < length + DISK_RESERVE_BYTES:
        raise ServiceError(
            507,
            f"not enough disk in the service's spool for a {length:,}-byte archive; "
            "retry later or ask the operator",
            type_="InsufficientStorage",
        )


async def receive(request: Request, path: Path, limit: int) -> int:
    """The request's body written to `path` as it arrives, never held whole; its size. 413 past
    `limit` (the front door counts it too), the file removed on any failure."""
    n = 0
    try:
        with path.open("xb") as f:
            async for chunk in request.stream():
                n += len(chunk)
                if n > limit:
                    raise ServiceError(
                        413,
                        f"archive over {limit:,} bytes (TERAG_MAX_ARCHIVE_BYTES)",
                        headers={"Connection": "close"},
                    )
                f.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if n == 0:
        path.unlink(missing_ok=True)
        raise ServiceError(422, "no archive in the request's body (send the .zip as the body)")
    return n


def check_archive(store: GraphStore, path: Path, namespace: str) -> dict[str, Any]:
    """The archive's manifest, once every member is verified and `namespace` may take it (the
    same checks as the import's first pass: an ArchiveError, 422, names what is wrong)."""
    from terag_neo4j.indexing.namespace_import import check_target
    from terag_neo4j.store.archive_format import open_archive, verify

    zf, manifest = open_archive(path)
    with zf:
        verify(path, zf, manifest)
    # A token no import holds: a leftover of a killed import is the job's to drop, not ours
    check_target(store, namespace, manifest, token="check-" + uuid.uuid4().hex)
    return manifest


def sweep(spool: Path, unfinished: Callable[[str], bool]) -> int:
    """Remove archives whose job ended (or never came to be); how many went. `unfinished(id)`
    says whether the job of that id still needs its archive."""
    removed = 0
    now = time.time()
    for path in spool.glob("*.zip*"):
        job_id = path.name.split(".", 1)[0]
        try:
            old = now - path.stat().st_mtime > PART_S
        except FileNotFoundError:
            continue
        # A finished job's archive, or one received by a process that died before its job
        if old and (path.name.endswith(".part") or not unfinished(job_id)):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


class ExportSlots:
    """At most `EXPORTS` exports streaming in this process; with several keys (`shared`), one
    key at most half. Beyond: 429 at once (an export is not worth queueing a connection for)."""

    def __init__(self, shared: bool) -> None:
        self.total = 0
        self.per_key: dict[str, int] = {}
        self.key_limit = max(1, EXPORTS // 2) if shared else EXPORTS

    @contextlib.contextmanager
    def held(self, who: str) -> Iterator[None]:
        mine = self.per_key.get(who, 0)
        if self.total >= EXPORTS or mine >= self.key_limit:
            raise ServiceError(
                429,
                f"busy: {self.total} namespace exports streaming (this key's limit: "
                f"{self.key_limit}); retry when one ends",
                headers={"Retry-After": "10"},
            )
        self.total += 1
        self.per_key[who] = mine + 1
        try:
            yield
        finally:
            self.total -= 1
            self.per_key[who] -= 1


def unlink_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
