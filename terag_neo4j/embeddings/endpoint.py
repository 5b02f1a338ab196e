"""Embedding models served over HTTP: the Ollama at OLLAMA_HOST (its `/api/embed`), or an
OpenAI-compatible `/v1/embeddings` endpoint. Vectors come back L2-normalised, as the local
backends' do; the dimension is the model's, read from its first answer."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import numpy as np

from terag_neo4j.embeddings.base import EmbeddingError, Vectors

log = logging.getLogger(__name__)

TIMEOUT_S = 120.0
# Texts per request: large enough to amortise the round trip, small enough for any server's
# request-size limit (OpenAI takes 2,048 inputs; a passage is at most a few hundred tokens)
REQUEST_TEXTS = 64


def _normalised(rows: list[list[float]], what: str) -> Vectors:
    vecs = np.asarray(rows, dtype=np.float32)
    if vecs.ndim != 2 or vecs.shape[1] == 0:
        raise EmbeddingError(f"{what} answered no vectors")
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return np.asarray(vecs / np.maximum(norms, 1e-12), dtype=np.float32)


class _HttpModel:
    what = "the embedding endpoint"

    def __init__(self, client: httpx.Client) -> None:
        self._http = client
        self.dimensions = int(self.encode(["dimension"], 1).shape[1])

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        try:
            resp = self._http.post(path, json=body)
        except httpx.HTTPError as e:
            raise EmbeddingError(f"{self.what} cannot be reached: {e}") from e
        if resp.status_code >= 400:
            raise EmbeddingError(
                f"{self.what} refused the request (HTTP {resp.status_code}): {resp.text[:200]}"
            )
        return resp.json()

    def _batch(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        rows: list[list[float]] = []
        for i in range(0, len(texts), REQUEST_TEXTS):
            part = texts[i : i + REQUEST_TEXTS]
            got = self._batch(part)
            if len(got) != len(part):
                raise EmbeddingError(
                    f"{self.what} answered {len(got)} vectors for {len(part)} texts"
                )
            rows += got
        return _normalised(rows, self.what)

    def close(self) -> None:
        self._http.close()


class OllamaModel(_HttpModel):
    """Any embedding model on the user's Ollama (`ollama pull nomic-embed-text` first)."""

    def __init__(self, model: str, host: str) -> None:
        self.model = model
        self.what = f"Ollama at {host} (model {model})"
        super().__init__(httpx.Client(base_url=host.rstrip("/"), timeout=TIMEOUT_S))

    def _batch(self, texts: list[str]) -> list[list[float]]:
        got = self._post("/api/embed", {"model": self.model, "input": texts, "truncate": True})
        return list(got.get("embeddings") or [])


class OpenAIModel(_HttpModel):
    """An OpenAI-compatible embeddings endpoint; `url` is its base (e.g. .../v1)."""

    def __init__(self, model: str, url: str, key: str | None) -> None:
        self.model = model
        base = url.rstrip("/")
        self.what = f"the embeddings endpoint {base} (model {model})"
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        super().__init__(httpx.Client(base_url=base, headers=headers, timeout=TIMEOUT_S))

    def _batch(self, texts: list[str]) -> list[list[float]]:
        got = self._post("/embeddings", {"model": self.model, "input": texts})
        data = sorted(got.get("data") or [], key=lambda d: int(d.get("index", 0)))
        return [list(d["embedding"]) for d in data]
