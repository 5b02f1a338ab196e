"""The namespace archive's format: a zip of JSON-lines members and a manifest, written and
checked as streams (docs/operations.md, "Namespace archives").

The manifest (`manifest.json`, written last, since it holds each member's sha256, size and row
count) is the archive's root of trust. `verify` reads every member once, before anything is
written to Neo4j: the member names must be exactly the manifest's, each member's size, sha256
and rows must match it, every row must have the shape its member takes, and every count and
size must be within the bounds below, so a corrupt, truncated, tampered, hostile or newer
archive is refused in one line. Nothing here talks to Neo4j (store/namespace_archive.py does).
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from terag_neo4j.store.archive_rows import CHECKS, MAX_DIMENSIONS, ArchiveError

FORMAT = "terag-namespace-archive"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
# Members in the order they are written and imported (each one JSON object per line)
MEMBERS = (
    "namespace.jsonl",
    "documents.jsonl",
    "passages.jsonl",
    "concepts.jsonl",
    "has_passage.jsonl",
    "co_occurrence.jsonl",
    "synonym.jsonl",
    "runs.jsonl",
)
# Bounds a hostile archive meets before it costs anything: the manifest is read whole, a row
# is read a line at a time (a passage's text and vector), a member and the counts are capped.
MAX_MANIFEST_BYTES = 1 << 20
MAX_LINE_BYTES = 16 << 20
MAX_MEMBER_BYTES = 1 << 40
MAX_ROWS = 100_000_000
# A member may inflate to at most this many times its compressed size (past a floor that costs
# little to read): real archives reach 1.5x (vectors, hashes) to 60x (synthetic text), deflate
# can reach 1,000x, and the first pass reads every byte before the import may start.
MAX_EXPANSION = 200
EXPANSION_FLOOR = 16 << 20
# ---------------------------------------------------------------- writing


# Keys sorted: a row's bytes do not depend on the order Neo4j stored its properties in
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode


class _Sink:
    """What zipfile writes to: bytes collected until the writer takes them (a stream has no
    seek, so zipfile writes each member's sizes after its data)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        out, self.parts = b"".join(self.parts), []
        return out


@dataclass
class _Member:
    sha: Any = field(default_factory=hashlib.sha256)
    bytes: int = 0
    rows: int = 0


class ArchiveWriter:
    """Writes an archive as a stream of bytes: `add(member, row)` for each row in member order,
    `take()` for the bytes written so far, `finish(manifest)` for the last ones."""

    def __init__(self) -> None:
        self.sink = _Sink()
        self.zip = zipfile.ZipFile(self.sink, "w", zipfile.ZIP_DEFLATED, compresslevel=1)  # type: ignore[call-overload]
        self.members: dict[str, _Member] = {}
        self.current: tuple[str, IO[bytes]] | None = None

    def add(self, member: str, row: dict[str, Any]) -> None:
        self.add_rows(member, (row,))

    def add_rows(self, member: str, rows: Iterable[dict[str, Any]]) -> None:
        """Rows of `member`, written as one block (a zip write per row is most of the cost
        of a member of a million small rows)."""
        if self.current is None or self.current[0] != member:
            self._close_member()
            if member in self.members:
                raise ArchiveError(f"member {member} written twice")
            self.members[member] = _Member()
            self.current = (member, self.zip.open(member, "w", force_zip64=True))
        lines = [_dumps(row).encode() + b"\n" for row in rows]
        block = b"".join(lines)
        m = self.members[member]
        m.sha.update(block)
        m.bytes += len(block)
        m.rows += len(lines)
        self.current[1].write(block)

    def _close_member(self) -> None:
        if self.current is not None:
            self.current[1].close()
            self.current = None

    def take(self) -> bytes:
        return self.sink.take()

    def finish(self, manifest: dict[str, Any]) -> bytes:
        """Close every member (an empty one for each not written) and write the manifest."""
        self._close_member()
        for name in MEMBERS:
            if name not in self.members:
                self.members[name] = _Member()
                self.zip.writestr(name, b"")
        manifest["members"] = {
            name: {"sha256": m.sha.hexdigest(), "bytes": m.bytes, "rows": m.rows}
            for name, m in self.members.items()
        }
        self.zip.writestr(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))
        self.zip.close()
        return self.take()


# ---------------------------------------------------------------- reading


def _check_manifest(m: object) -> dict[str, Any]:
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise ArchiveError(f"not a namespace archive: its manifest's format is not {FORMAT!r}")
    version = m.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ArchiveError("the manifest's format_version is not a positive number")
    if version > FORMAT_VERSION:
        raise ArchiveError(
            f"the archive's format_version is {version}, newer than this terag reads "
            f"({FORMAT_VERSION}): import it with the terag version that wrote it "
            f"({str(m.get('terag_version'))[:40]}) or newer"
        )
    emb = m.get("embedding")
    if not isinstance(emb, dict) or not isinstance(emb.get("model"), str):
        raise ArchiveError("the manifest names no embedding model")
    dims = emb.get("dimensions")
    if not isinstance(dims, int) or not 0 < dims <= MAX_DIMENSIONS:
        raise ArchiveError(f"the manifest's embedding dimensions are not 1 to {MAX_DIMENSIONS}")
    members = m.get("members")
    if not isinstance(members, dict) or set(members) != set(MEMBERS):
        raise ArchiveError(f"the manifest does not list exactly the members {', '.join(MEMBERS)}")
    for name, info in members.items():
        if not isinstance(info, dict):
            raise ArchiveError(f"the manifest's entry for {name} is not an object")
        size, rows, sha = info.get("bytes"), info.get("rows"), info.get("sha256")
        if not isinstance(size, int) or not 0 <= size <= MAX_MEMBER_BYTES:
            raise ArchiveError(f"{name}: its size in the manifest is not 0 to {MAX_MEMBER_BYTES}")
        if not isinstance(rows, int) or not 0 <= rows <= MAX_ROWS:
            raise ArchiveError(f"{name}: its row count in the manifest is not 0 to {MAX_ROWS}")
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise ArchiveError(f"{name}: its sha256 in the manifest is not 64 hex digits")
    return m


def open_archive(path: Path) -> tuple[zipfile.ZipFile, dict[str, Any]]:
    """The archive opened, with its manifest checked; refuses a file that is not a zip, has
    other members than the format's, or members larger than the manifest says."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise ArchiveError(f"{path.name}: not a readable zip archive ({e})") from e
    try:
        names = [i.filename for i in zf.infolist()]
        if len(names) != len(set(names)) or set(names) != {MANIFEST, *MEMBERS}:
            odd = sorted(set(names) - {MANIFEST, *MEMBERS})[:3]
            raise ArchiveError(
                f"{path.name}: its members are not exactly {MANIFEST} and the format's "
                f"{len(MEMBERS)} (unexpected or repeated: {', '.join(map(repr, odd)) or 'none'})"
            )
        for member in zf.infolist():
            if member.file_size > max(EXPANSION_FLOOR, MAX_EXPANSION * member.compress_size):
                raise ArchiveError(
                    f"{path.name}: {member.filename} would inflate "
                    f"{member.file_size // max(member.compress_size, 1)}-fold (at most "
                    f"{MAX_EXPANSION}-fold past {EXPANSION_FLOOR >> 20} MiB): a compression bomb"
                )
        info = zf.getinfo(MANIFEST)
        if info.file_size > MAX_MANIFEST_BYTES:
            raise ArchiveError(f"{path.name}: its manifest is over {MAX_MANIFEST_BYTES} bytes")
        with zf.open(MANIFEST) as f:
            raw = f.read(MAX_MANIFEST_BYTES + 1)
        try:
            manifest = _check_manifest(json.loads(raw))
        except json.JSONDecodeError as e:
            raise ArchiveError(f"{path.name}: its manifest is not JSON ({e})") from e
        for name in MEMBERS:
            declared = manifest["members"][name]["bytes"]
            if zf.getinfo(name).file_size != declared:
                raise ArchiveError(
                    f"{path.name}: {name} holds {zf.getinfo(name).file_size} bytes, the "
                    f"manifest says {declared} (tampered or truncated)"
                )
        return zf, manifest
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        zf.close()
        raise ArchiveError(f"{path.name}: corrupt archive ({e})") from e
    except BaseException:
        zf.close()
        raise


def _lines(zf: zipfile.ZipFile, name: str) -> Iterator[bytes]:
    with zf.open(name) as f:
        while True:
            line = f.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            if not line.endswith(b"\n"):
                raise ArchiveError(
                    f"{name}: a row is over {MAX_LINE_BYTES} bytes or not ended by a newline"
                )
            yield line


def rows(zf: zipfile.ZipFile, name: str) -> Iterator[dict[str, Any]]:
    """The rows of a member, one at a time (after `verify`, which has checked their shape)."""
    for line in _lines(zf, name):
        row = json.loads(line)
        yield row


def verify(path: Path, zf: zipfile.ZipFile, manifest: dict[str, Any]) -> None:
    """The first pass: every member's bytes, sha256, row count and rows' shapes against the
    manifest. Memory is one row at a time."""
    dims = int(manifest["embedding"]["dimensions"])
    for name in MEMBERS:
        want = manifest["members"][name]
        sha, size, count = hashlib.sha256(), 0, 0
        check = CHECKS[name]
        try:
            for line in _lines(zf, name):
                sha.update(line)
                size += len(line)
                count += 1
                if count > want["rows"]:
                    raise ArchiveError(
                        f"{path.name}: {name} has more rows than the manifest's {want['rows']}"
                    )
                try:
                    row = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError) as e:
                    raise ArchiveError(f"{path.name}: {name} row {count} is not JSON") from e
                if not isinstance(row, dict):
                    raise ArchiveError(f"{path.name}: {name} row {count} is not an object")
                try:
                    check(row, dims)
                except ArchiveError as e:
                    raise ArchiveError(f"{path.name}: {name} row {count}: {e}") from e
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise ArchiveError(f"{path.name}: {name} is corrupt ({e})") from e
        if size != want["bytes"] or count != want["rows"] or sha.hexdigest() != want["sha256"]:
            raise ArchiveError(
                f"{path.name}: {name} does not match its manifest entry (sha256, size or rows): "
                "the archive is corrupt, truncated or tampered with"
            )
