"""Unit tests of the namespace archive's format (no Neo4j): vectors come back bit for bit, a
written archive verifies, and each kind of bad archive is refused by the first pass in one line."""

from __future__ import annotations

import json
import zipfile
from array import array
from pathlib import Path

import pytest

from terag_neo4j.store.archive_format import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    ArchiveWriter,
    open_archive,
    rows,
    verify,
)
from terag_neo4j.store.archive_rows import ArchiveError, decode_vector, encode_vector


def test_vectors_come_back_exactly_as_float32_or_float64() -> None:
    f32 = array("f", [0.5, -0.25, 1.0 / 3.0]).tolist()  # values a float32 model makes
    assert encode_vector(f32).startswith("f4:") and decode_vector(encode_vector(f32)) == f32
    f64 = [0.1, 0.2]
    assert encode_vector(f64).startswith("f8:") and decode_vector(encode_vector(f64)) == f64
    with pytest.raises(ArchiveError):
        decode_vector("f4:not base64!")
    with pytest.raises(ArchiveError):
        decode_vector("x9:AAAA")


def _archive(path: Path, dims: int = 2) -> Path:
    w = ArchiveWriter()
    data = w.take()
    w.add("namespace.jsonl", {"props": {"extractor": "spacy"}})
    vec = encode_vector([0.5] * dims)
    w.add("passages.jsonl", {"props": {"id": "d#0", "hash": "h", "text": "t"}, "embedding": vec})
    w.add("concepts.jsonl", {"props": {"key": "entity:a", "frequency": 1}, "embedding": None})
    w.add("has_passage.jsonl", {"concept": "entity:a", "passage": "d#0", "mention": False})
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "namespace": "src",
        "embedding": {"model": "m", "dimensions": dims},
    }
    data += w.take() + w.finish(manifest)
    path.write_bytes(data)
    return path


def test_a_written_archive_verifies_and_reads_back(tmp_path: Path) -> None:
    path = _archive(tmp_path / "a.zip")
    zf, manifest = open_archive(path)
    with zf:
        verify(path, zf, manifest)
        assert manifest["members"]["passages.jsonl"]["rows"] == 1
        assert [r["concept"] for r in rows(zf, "has_passage.jsonl")] == ["entity:a"]


def _rewrite(path: Path, out: Path, edit_manifest: object = None, **members: bytes) -> Path:
    with zipfile.ZipFile(path) as zf:
        data = {i.filename: zf.read(i.filename) for i in zf.infolist()}
    data.update(members)
    if callable(edit_manifest):
        m = json.loads(data[MANIFEST])
        edit_manifest(m)
        data[MANIFEST] = json.dumps(m).encode()
    with zipfile.ZipFile(out, "w") as zf:
        for name, blob in data.items():
            zf.writestr(name, blob)
    return out


def _refusal(path: Path) -> str:
    with pytest.raises(ArchiveError) as e:
        zf, manifest = open_archive(path)
        with zf:
            verify(path, zf, manifest)
    assert "\n" not in str(e.value)
    return str(e.value)


def test_each_bad_archive_is_refused_in_one_line(tmp_path: Path) -> None:
    good = _archive(tmp_path / "good.zip")
    out = tmp_path / "bad.zip"
    out.write_bytes(good.read_bytes()[:-40])
    assert "not a readable zip" in _refusal(out)
    newer = _rewrite(good, out, lambda m: m.update(format_version=FORMAT_VERSION + 1))
    assert "newer than this terag reads" in _refusal(newer)
    evil = _rewrite(good, out, None, **{"../x.jsonl": b"{}\n"})
    assert "'../x.jsonl'" in _refusal(evil)
    huge = _rewrite(good, out, lambda m: m["members"]["passages.jsonl"].update(rows=10**12))
    assert "row count in the manifest" in _refusal(huge)
    with zipfile.ZipFile(good) as zf:
        passages = zf.read("passages.jsonl")
    same_size = passages.replace(b'"t"', b'"u"')
    assert "does not match its manifest" in _refusal(
        _rewrite(good, out, None, **{"passages.jsonl": same_size})
    )


def test_a_row_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    """A row whose manifest entry was resealed still meets the row checks."""
    good = _archive(tmp_path / "good.zip", dims=3)
    bad_vec = json.dumps({"props": {"id": "x", "hash": "h"}, "embedding": encode_vector([1.0])})
    reserved = json.dumps({"props": {"key": "k", "frequency": 1, "namespace": "other"}})
    for member, line, message in (
        ("passages.jsonl", bad_vec, "not 3-dimensional"),
        ("concepts.jsonl", reserved, "property name 'namespace' is not allowed"),
    ):
        import hashlib

        blob = (line + "\n").encode()

        def reseal(
            m: dict[str, dict[str, dict[str, object]]], b: bytes = blob, n: str = member
        ) -> None:
            m["members"][n].update(sha256=hashlib.sha256(b).hexdigest(), bytes=len(b), rows=1)

        path = _rewrite(good, tmp_path / f"{member}.zip", reseal, **{member: blob})
        assert message in _refusal(path)


def test_a_compression_bomb_is_refused_before_a_byte_is_inflated(tmp_path: Path) -> None:
    """A member that deflate shrank 1,000-fold (24 MiB of newlines) is refused from the zip's
    directory alone; the same bytes stored uncompressed are only read and checked."""
    good = _archive(tmp_path / "good.zip")
    with zipfile.ZipFile(good) as zf:
        data = {i.filename: zf.read(i.filename) for i in zf.infolist()}
    data["synonym.jsonl"] = b"\n" * (24 << 20)
    for compression, message in (
        (zipfile.ZIP_DEFLATED, "a compression bomb"),
        (zipfile.ZIP_STORED, "holds 25165824 bytes, the manifest says"),
    ):
        out = tmp_path / f"bomb{compression}.zip"
        with zipfile.ZipFile(out, "w", compression=compression) as zf:
            for name, blob in data.items():
                zf.writestr(name, blob)
        assert message in _refusal(out)
