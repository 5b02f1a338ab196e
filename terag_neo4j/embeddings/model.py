"""Sentence embeddings for concepts, passages and query entities.

The packaged models run without torch: the settings' default, `bge-small-en-v1.5`, and
all-MiniLM-L6-v2 (`DEFAULT_MODEL`, an `Embedder`'s own default) are ONNX exports fetched once
from Maven and run on OpenVINO (see `onnx_models`), so nothing is fetched from a model hub. Any
other name or local path is a sentence-transformers model (the `st` extra: torch), computed by
one of two CPU backends:

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

import copy
import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from terag_neo4j.config import SettingsError
from terag_neo4j.core.sqlite_cache import open_cache
from terag_neo4j.embeddings import onnx as onnx_models
from terag_neo4j.embeddings.base import Backend, EmbeddingError, Vectors, import_st
from terag_neo4j.embeddings.openvino import (
    OpenVinoModel,
    local_only,
    openvino_available,
    openvino_model,
    openvino_precision,
    st_dimensions,
)
from terag_neo4j.embeddings.spec import ModelSpec, model_prefixes, parse_spec
from terag_neo4j.errors import DependencyError, one_line

if TYPE_CHECKING:
    from terag_neo4j.config import Settings

log = logging.getLogger(__name__)


DEFAULT_MODEL = "all-MiniLM-L6-v2"
BACKENDS: tuple[str, ...] = ("auto", "torch", "openvino")


# Spellings of the packaged MiniLM that once named the sentence-transformers package of it:
# namespaces recorded them as DEFAULT_MODEL, and they load the packaged ONNX export.
MINILM_ALIASES = frozenset({f"sentence-transformers/{DEFAULT_MODEL}"})


def model_spec(name: str) -> ModelSpec:
    """What the model setting `name` names (`spec.parse_spec`)."""
    spec = parse_spec(name, frozenset(onnx_models.PACKAGED))
    if spec.kind == "st" and (spec.target in MINILM_ALIASES or spec.target == DEFAULT_MODEL):
        return ModelSpec("packaged", DEFAULT_MODEL, DEFAULT_MODEL)
    return spec


def model_id(name: str) -> str:
    """The name a namespace records for the embedding model `name`: a packaged model under one
    name whichever way it is spelled, a local folder as its absolute path, an Ollama model with
    its tag, else the spec without its `st:` (see `spec.parse_spec`)."""
    return model_spec(name).id


def settings_home() -> Path:
    try:
        from terag_neo4j.config import Settings

        return Settings().home
    except Exception:  # an unrelated invalid setting must not stop embedding
        from terag_neo4j.config import default_home

        return default_home()


class _Model(Protocol):
    dimensions: int

    def encode(self, texts: list[str], batch_size: int) -> Vectors: ...


class _TorchModel:
    def __init__(self, path: str) -> None:
        st = import_st("sentence_transformers", f"the embedding model {path}")
        try:
            self._st = st.SentenceTransformer(path, device="cpu", **local_only(path))
        except (OSError, ValueError) as e:  # not on disk, not in the hub's cache, not a model
            why = one_line(e) or type(e).__name__
            raise EmbeddingError(
                f"the embedding model {path} cannot be loaded ({why}): name a local model "
                "folder, or a hub model this machine can download or has in its cache"
            ) from e
        self.dimensions = st_dimensions(self._st)

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        vecs = self._st.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)


class Embedder:
    """Thread-safe, lazily loaded; vectors are L2-normalised so cosine is a dot product.

    `model`: a model spec (`spec.parse_spec`). `backend` (sentence-transformers models):
    "auto" (OpenVINO where installed, else torch), "torch" or "openvino". `home`: where exports
    are cached (default: the `TERAG_HOME` setting). `prefixes`: (query, passage) prefixes, by
    default the ones the model family was trained with (`spec.model_prefixes`). `settings`: where
    the Ollama host and the embeddings endpoint come from (default: `Settings()`).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        batch_size: int = 64,
        backend: Backend = "auto",
        home: Path | None = None,
        prefixes: tuple[str, str] | None = None,
        settings: Settings | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise SettingsError(f"embedding backend must be one of {BACKENDS}, not {backend!r}")
        self.spec = model_spec(model)  # refuses a malformed spec before anything loads
        self.model_name = model
        self.query_prefix, self.passage_prefix = prefixes or model_prefixes(model_id(model))
        self._settings = settings
        self.batch_size = batch_size
        self.requested_backend = backend
        self._home = home
        self._model: _Model | None = None
        self._backend: str | None = None
        self._lock = threading.Lock()
        self._weights: Embedder | None = None  # the embedder whose loaded model this one uses

    def with_prefixes(self, query: str, passage: str) -> Embedder:
        """This model with other prefixes (those a namespace recorded), sharing its weights: a
        second namespace of the same model must not load it twice."""
        if (query, passage) == (self.query_prefix, self.passage_prefix):
            return self
        twin = copy.copy(self)
        twin.query_prefix, twin.passage_prefix = query, passage
        twin._weights = self._weights or self
        twin._model, twin._backend = None, None  # closed by the owner of the weights only
        return twin

    def _load(self) -> _Model:
        if self._weights is not None:
            return self._weights._load()
        with self._lock:
            if self._model is None:
                # Offline without HF_HUB_OFFLINE (which would hold for the whole process): a
                # local model folder is loaded with local_files_only (see `local_only`).
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                if self.spec.kind == "packaged":
                    self._model, self._backend = self._open_packaged()
                elif self.spec.kind == "st":
                    self._model, self._backend = self._open(self.spec.target)
                else:
                    self._model, self._backend = self._open_other(self.spec)
            return self._model

    def _open_other(self, spec: ModelSpec) -> tuple[_Model, str]:
        if spec.kind == "onnx":
            precision = openvino_precision()
            model = onnx_models.OnnxFolderModel(Path(spec.target), precision)
            return model, f"onnx-{precision}"
        from terag_neo4j.embeddings.endpoint import OllamaModel, OpenAIModel

        if self._settings is None:
            from terag_neo4j.config import Settings

            self._settings = Settings()
        s = self._settings
        if spec.kind == "ollama":
            return OllamaModel(spec.target, s.ollama_host), "ollama"
        if spec.kind == "openai":
            if not s.embedding_url:
                raise SettingsError(
                    f"{self.model_name} needs the endpoint's base URL: set TERAG_EMBEDDING_URL "
                    "(e.g. https://api.openai.com/v1) and TERAG_EMBEDDING_API_KEY"
                )
            key = s.embedding_api_key.get_secret_value() if s.embedding_api_key else None
            return OpenAIModel(spec.target, s.embedding_url, key), "openai"
        raise SettingsError(f"{self.model_name} is not an embedding model spec (docs/embedders.md)")

    def _open_packaged(self) -> tuple[_Model, str]:
        if self.requested_backend == "torch" or not openvino_available():
            raise DependencyError(
                f"the embedding model {self.model_name} runs on the openvino backend only: "
                "install openvino and leave the backend at auto"
            )
        spec = onnx_models.PACKAGED[self.spec.target]
        folder = onnx_models.model_dir(self.spec.target, self._home or settings_home())
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
                model_file, meta = openvino_model(local, self._home or settings_home())
                precision = openvino_precision()
                return OpenVinoModel(model_file, meta, precision), f"openvino-{precision}"
            except DependencyError:
                raise  # torch is missing: its fallback would be missing too
            except Exception as e:
                if want == "openvino":
                    raise
                log.warning("OpenVINO embedding unavailable (%s); using torch", e)
        return _TorchModel(str(path)), "torch"

    @property
    def backend(self) -> str:
        """The backend in use: "torch", "openvino-bf16" or "openvino-f32" (loads the model)."""
        if self._weights is not None:
            return self._weights.backend
        if (
            self._backend is None
            and self.spec.kind == "st"
            and (
                self.requested_backend == "torch"
                or (self.requested_backend == "auto" and not openvino_available())
            )
        ):
            return "torch"
        self._load()
        assert self._backend is not None
        return self._backend

    @property
    def dimensions(self) -> int:
        return self._load().dimensions

    def embed_query(self, query: str) -> Vectors:
        """The question's vector, with the model's query prefix (`embed` puts the passage one:
        passages, concept names and a question's entities compare with each other)."""
        vecs: Vectors = self._load().encode([self.query_prefix + query], 1)
        return np.asarray(vecs[0], dtype=np.float32)

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = self._load()
        if self.passage_prefix:
            texts = [self.passage_prefix + t for t in texts]
        if not show_progress:
            return model.encode(list(texts), self.batch_size)
        from tqdm import tqdm

        parts, step = [], max(self.batch_size * 16, 1)
        for i in tqdm(range(0, len(texts), step), desc="embedding", unit="chunk"):
            parts.append(model.encode(list(texts[i : i + step]), self.batch_size))
        return np.concatenate(parts)


def settings_embedder(model: str, settings: Settings) -> Embedder:
    """An `Embedder` of `model` as `settings` configure it. TERAG_EMBEDDING_QUERY_PREFIX and
    _PASSAGE_PREFIX are TERAG_EMBEDDING_MODEL's: another model is used with its family's
    prefixes. A namespace that recorded its prefixes is embedded with those instead
    (`store/namespace_embedder.py`)."""
    ident = model_id(model)
    query, passage = model_prefixes(ident)
    if ident == model_id(settings.embedding_model):
        query = (
            query if settings.embedding_query_prefix is None else settings.embedding_query_prefix
        )
        if settings.embedding_passage_prefix is not None:
            passage = settings.embedding_passage_prefix
    return Embedder(model, settings.embedding_batch, prefixes=(query, passage), settings=settings)


class CachedEmbedder:
    """An `Embedder` with a persistent cache keyed by (model, backend, text).

    Benchmarks index one corpus into several namespaces (ablations, reruns); each text is embedded
    once per model and backend, ever.
    """

    def __init__(self, embedder: Embedder, path: Path) -> None:
        self.embedder = embedder
        self.path = path
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

    def with_prefixes(self, query: str, passage: str) -> CachedEmbedder:
        """`Embedder.with_prefixes`, with a cache of its own keys in the same file."""
        twin = self.embedder.with_prefixes(query, passage)
        return self if twin is self.embedder else CachedEmbedder(twin, self.path)

    @property
    def dimensions(self) -> int:
        return self.embedder.dimensions

    def _tag(self) -> str:
        backend = self.embedder.backend
        # torch keeps the key it always had, so caches written before backends existed stay valid.
        name = self.embedder.model_name
        prefix = getattr(self.embedder, "passage_prefix", "")
        if prefix:
            name = f"{name}\x1fpassage={prefix}"
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
        # A served model holds an HTTP connection pool
        closer = getattr(getattr(self.embedder, "_model", None), "close", None)
        if callable(closer):
            closer()


def cached_embedder(model: str, settings: Settings) -> CachedEmbedder:
    """`settings_embedder` with the persistent cache in the settings' home."""
    return CachedEmbedder(settings_embedder(model, settings), settings.home / "embeddings.sqlite3")


# Either kind embeds the same way (`embed`, `dimensions`, `model_name`).
AnyEmbedder = Embedder | CachedEmbedder
