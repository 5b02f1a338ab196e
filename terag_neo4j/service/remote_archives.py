"""`TeragRemote.export_namespace` / `import_namespace` (and the async twins): a namespace's
archive over the service, streamed both ways (never whole in memory), as `TeragClient`'s are
to and from a file."""

from __future__ import annotations

import asyncio
import json
import os
import zipfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO

import httpx

from terag_neo4j.errors import TeragError
from terag_neo4j.service.paths import namespace_path
from terag_neo4j.service.remote_stream import raise_for
from terag_neo4j.service.schemas import Job

ZIP_HEADERS = {"Content-Type": "application/zip"}
CHUNK = 1 << 20
MANIFEST_BYTES = 1 << 20  # as the archive format bounds its manifest
# An export streams for as long as the namespace takes to read: no read timeout between chunks
# would be right for a huge one, so each read may wait this long
READ_TIMEOUT_S = 600.0


class NotAnArchive(TeragError, ValueError):
    """A file whose manifest names no namespace to import into (pass `namespace=`)."""


def archive_namespace(path: str | Path) -> str:
    """The namespace an archive was exported from (its manifest's), the default target."""
    try:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("manifest.json")
            if info.file_size > MANIFEST_BYTES:
                raise NotAnArchive("its manifest is too large")
            name = json.loads(zf.read(info)).get("namespace")
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
        raise NotAnArchive(f"{path}: not a namespace archive ({e}); pass namespace=") from None
    if not isinstance(name, str) or not name:
        raise NotAnArchive(f"{path}: its manifest names no namespace; pass namespace=")
    return name


def _part(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.part")


class SyncArchives:
    http: httpx.Client
    namespace: str

    def wait(self, job_id: str, timeout: float = 600.0) -> Job:
        raise NotImplementedError  # `TeragRemote.wait`: polls the job until it ends

    def export_namespace(self, path: str | Path, namespace: str | None = None) -> Path:
        """Write the namespace's archive to `path`, streamed (renamed when whole, so a cut
        stream never leaves a partial archive under the name)."""
        out = Path(path)
        tmp = _part(out)
        url = namespace_path(namespace or self.namespace, "/export")
        timeout = httpx.Timeout(self.http.timeout.connect, read=READ_TIMEOUT_S)
        try:
            with self.http.stream("GET", url, timeout=timeout) as r:
                if r.status_code >= 400:
                    r.read()
                    raise_for(r)
                with tmp.open("wb") as f:
                    for chunk in r.iter_bytes(CHUNK):
                        f.write(chunk)
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
        return out

    def import_namespace(
        self,
        path: str | Path,
        namespace: str | None = None,
        wait: bool = False,
        timeout: float = 3600.0,
    ) -> Job:
        """Send an archive to import into `namespace` (default: the one it was exported
        from) as a job; `wait` polls it until it ends. A refused archive raises RemoteError
        (422) and the namespace is untouched."""
        target = namespace or archive_namespace(path)
        with Path(path).open("rb") as f:
            r = self.http.post(
                namespace_path(target, "/import"),
                content=_chunks(f),
                headers=_headers(path),
                timeout=httpx.Timeout(self.http.timeout.connect, read=READ_TIMEOUT_S),
            )
        raise_for(r)
        job = Job.model_validate(r.json())
        return self.wait(job.id, timeout) if wait else job


class AsyncArchives:
    http: httpx.AsyncClient
    namespace: str

    async def wait(self, job_id: str, timeout: float = 600.0) -> Job:
        raise NotImplementedError  # `AsyncTeragRemote.wait`

    async def export_namespace(self, path: str | Path, namespace: str | None = None) -> Path:
        """`TeragRemote.export_namespace`, asynchronously."""
        out = Path(path)
        tmp = _part(out)
        url = namespace_path(namespace or self.namespace, "/export")
        timeout = httpx.Timeout(self.http.timeout.connect, read=READ_TIMEOUT_S)
        try:
            async with self.http.stream("GET", url, timeout=timeout) as r:
                if r.status_code >= 400:
                    await r.aread()
                    raise_for(r)
                with tmp.open("wb") as f:
                    async for chunk in r.aiter_bytes(CHUNK):
                        await asyncio.to_thread(f.write, chunk)
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
        return out

    async def import_namespace(
        self,
        path: str | Path,
        namespace: str | None = None,
        wait: bool = False,
        timeout: float = 3600.0,
    ) -> Job:
        """`TeragRemote.import_namespace`, asynchronously."""
        target = namespace or archive_namespace(path)
        with Path(path).open("rb") as f:
            r = await self.http.post(
                namespace_path(target, "/import"),
                content=_achunks(f),
                headers=_headers(path),
                timeout=httpx.Timeout(self.http.timeout.connect, read=READ_TIMEOUT_S),
            )
        raise_for(r)
        job = Job.model_validate(r.json())
        return await self.wait(job.id, timeout) if wait else job


def _headers(path: str | Path) -> dict[str, str]:
    # A length up front: the service refuses an archive over its limit before reading it
    return {**ZIP_HEADERS, "Content-Length": str(Path(path).stat().st_size)}


def _chunks(f: IO[bytes]) -> Iterator[bytes]:
    while chunk := f.read(CHUNK):
        yield chunk


async def _achunks(f: IO[bytes]) -> AsyncIterator[bytes]:
    while chunk := await asyncio.to_thread(f.read, CHUNK):
        yield chunk
