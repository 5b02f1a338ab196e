"""Choosing the embedding backend of a sentence-transformers model, falling back to torch, and
cache keys per backend (no model)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from terag_neo4j.embeddings import CachedEmbedder, Embedder
from terag_neo4j.embeddings import model as embeddings


class FakeModel:
    dimensions = 3

    def __init__(self, *_: Any) -> None:
        self.calls = 0

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        self.calls += 1
        return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)


@pytest.fixture
def fake_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_TorchModel", FakeModel)


@pytest.fixture
def st_model(tmp_path: Path) -> str:
    """A sentence-transformers model folder, never loaded: the loaders are stand-ins."""
    (tmp_path / "model").mkdir()
    return f"st:{tmp_path / 'model'}"


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="embedding backend"):
        Embedder(backend="tensorrt")  # type: ignore[arg-type]


def test_auto_without_openvino_uses_torch(
    monkeypatch: pytest.MonkeyPatch, fake_torch: None, tmp_path: Path, st_model: str
) -> None:
    monkeypatch.setattr(embeddings, "openvino_available", lambda: False)

    def no_export(*_: Any) -> None:
        raise AssertionError("must not convert without openvino")

    monkeypatch.setattr(embeddings, "openvino_model", no_export)
    emb = Embedder(st_model, home=tmp_path)
    assert emb.backend == "torch"
    assert emb.embed(["a"]).shape == (1, 3)


def test_auto_falls_back_to_torch_when_the_export_fails(
    monkeypatch: pytest.MonkeyPatch, fake_torch: None, tmp_path: Path, st_model: str
) -> None:
    monkeypatch.setattr(embeddings, "openvino_available", lambda: True)

    def broken(*_: Any) -> None:
        raise RuntimeError("export broke")

    monkeypatch.setattr(embeddings, "openvino_model", broken)
    assert Embedder(st_model, home=tmp_path).backend == "torch"


def test_an_explicit_openvino_backend_does_not_fall_back(
    monkeypatch: pytest.MonkeyPatch, fake_torch: None, tmp_path: Path, st_model: str
) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("export broke")

    monkeypatch.setattr(embeddings, "openvino_model", broken)
    with pytest.raises(RuntimeError, match="export broke"):
        _ = Embedder(st_model, backend="openvino", home=tmp_path).backend


class NamedBackend:
    def __init__(self, backend: str) -> None:
        self.model_name = "m"
        self.backend = backend
        self.dimensions = 3
        self._home = None
        self.model = FakeModel()

    def embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self.model.encode(texts, 64)


def test_cache_keys_include_the_backend(tmp_path: Path) -> None:
    torch_cache = CachedEmbedder(NamedBackend("torch"), tmp_path / "e.sqlite3")  # type: ignore[arg-type]
    ov_cache = CachedEmbedder(NamedBackend("openvino-bf16"), tmp_path / "e.sqlite3")  # type: ignore[arg-type]
    # torch keeps the key caches were written with before there were backends
    assert torch_cache._key("x") == hashlib.sha256(b"m\x1fx").hexdigest()[:32]
    assert ov_cache._key("x") != torch_cache._key("x")
    torch_cache.embed(["x"])
    ov_cache.embed(["x"])
    assert ov_cache.embedder.model.calls == 1  # type: ignore[attr-defined]  # no hit on torch's row
    ov_cache.embed(["x"])
    assert ov_cache.embedder.model.calls == 1  # type: ignore[attr-defined]
    torch_cache.close()
    ov_cache.close()


def test_exports_go_beside_the_embedding_cache(tmp_path: Path) -> None:
    emb = Embedder()
    CachedEmbedder(emb, tmp_path / "embeddings.sqlite3").close()
    assert emb._home == tmp_path
