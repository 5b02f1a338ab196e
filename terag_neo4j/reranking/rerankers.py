"""Rerankers: a model that scores (question, passage) pairs together, which a bi-encoder's
separate vectors cannot. Three kinds, picked by TERAG_RERANKER's spec (embeddings/spec.py):

- `st:<hub name or folder>` (or either bare): a sentence-transformers `CrossEncoder` (the `st`
  extra: torch);
- `onnx:<folder>`: a cross-encoder exported to ONNX (`model.onnx`) or OpenVINO IR
  (`model.xml`) beside its `tokenizer.json`, run with OpenVINO;
- an http(s) URL: a rerank endpoint. With `#<model>` it is asked in the Cohere/Jina shape
  (`{model, query, documents}` -> `{results: [{index, relevance_score}]}`); without, in the TEI
  shape (`{query, texts}` -> `[{index, score}]`). TERAG_RERANKER_API_KEY is its bearer key.

Each returns one score per passage (higher: more relevant) and the tokens it scored where it
knows them (0 where it does not).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx
import numpy as np
import numpy.typing as npt

from terag_neo4j.embeddings.base import import_st
from terag_neo4j.embeddings.openvino import infer_sorted, load_openvino, local_only
from terag_neo4j.embeddings.spec import ModelSpec, parse_spec
from terag_neo4j.errors import TeragError

Scores = npt.NDArray[np.float32]
TIMEOUT_S = 60.0
MAX_BATCH = 16


class RerankError(TeragError, RuntimeError):
    """A reranker that cannot be loaded or answered; the message says which and why."""


class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: Sequence[str]) -> tuple[Scores, int]: ...


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder (torch, the `st` extra), loaded on first use."""

    def __init__(self, target: str, name: str) -> None:
        self.name = name
        self._target = target
        self._model: Any = None
        self._lock = threading.Lock()

    def score(self, query: str, passages: Sequence[str]) -> tuple[Scores, int]:
        with self._lock:
            if self._model is None:
                st = import_st("sentence_transformers", f"the reranker {self.name}")
                target = self._target
                self._model = st.CrossEncoder(target, device="cpu", **local_only(target))
        pairs = [(query, p) for p in passages]
        scores = self._model.predict(pairs, batch_size=MAX_BATCH, show_progress_bar=False)
        tokens = self._model.tokenizer(pairs, truncation=True)["input_ids"]
        return np.asarray(scores, dtype=np.float32).reshape(len(pairs)), sum(map(len, tokens))


class OnnxReranker:
    """A cross-encoder exported to ONNX or OpenVINO IR, compiled by OpenVINO; the score is its
    last logit (the relevant class of a two-class head, the only one of a one-logit head)."""

    def __init__(self, folder: Path, name: str) -> None:
        from tokenizers import Tokenizer

        from terag_neo4j.embeddings.onnx import _folder_file, folder_max_length

        self.name = name
        ov = load_openvino()
        core = ov.Core()
        model = _folder_file(folder, ("model.onnx", "onnx/model.onnx", "model.xml"), "model file")
        # f32: a handful of pairs a question costs little, and bf16 reorders close scores
        config = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"}
        self._compiled = core.compile_model(core.read_model(str(model)), "CPU", config)
        tok = Tokenizer.from_file(str(_folder_file(folder, ("tokenizer.json",), "tokenizer")))
        tok.no_padding()
        tok.enable_truncation(folder_max_length(folder))
        self._tok = tok
        shape = self._compiled.output(0).get_partial_shape()
        self._labels = shape[1].get_length() if shape.rank.get_length() == 2 else 1

    def score(self, query: str, passages: Sequence[str]) -> tuple[Scores, int]:
        encodings = self._tok.encode_batch([(query, p) for p in passages])
        logits = infer_sorted(
            self._compiled,
            encodings,
            self._labels,
            MAX_BATCH,
            0,
            lambda result, mask: np.asarray(result[0], dtype=np.float32).reshape(len(mask), -1),
        )
        return logits[:, -1].copy(), sum(len(e.ids) for e in encodings)


class HttpReranker:
    """A rerank endpoint in the Cohere/Jina shape (a model named) or the TEI shape (none)."""

    def __init__(self, url: str, key: str | None) -> None:
        endpoint, _, model = url.partition("#")
        self.name = url
        self._url = endpoint
        self._model = model or None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(headers=headers, timeout=TIMEOUT_S)

    def score(self, query: str, passages: Sequence[str]) -> tuple[Scores, int]:
        if self._model is not None:
            body: dict[str, Any] = {
                "model": self._model,
                "query": query,
                "documents": list(passages),
                "top_n": len(passages),
            }
        else:
            body = {"query": query, "texts": list(passages)}
        try:
            resp = self._http.post(self._url, json=body)
        except httpx.HTTPError as e:
            raise RerankError(f"the rerank endpoint {self._url} cannot be reached: {e}") from e
        if resp.status_code >= 400:
            raise RerankError(
                f"the rerank endpoint {self._url} refused the request (HTTP {resp.status_code}): "
                f"{resp.text[:200]}"
            )
        got = resp.json()
        rows = got.get("results", []) if isinstance(got, dict) else got
        scores = np.full(len(passages), -np.inf, dtype=np.float32)
        for r in rows:
            value = r.get("relevance_score", r.get("score"))
            if value is not None and 0 <= int(r["index"]) < len(passages):
                scores[int(r["index"])] = float(value)
        if np.isneginf(scores).any():
            raise RerankError(f"the rerank endpoint {self._url} left passages without a score")
        usage = (got.get("usage") or {}) if isinstance(got, dict) else {}
        return scores, int(usage.get("total_tokens") or 0)

    def close(self) -> None:
        self._http.close()


def make_reranker(spec_text: str, key: str | None = None) -> Reranker:
    """The reranker TERAG_RERANKER names (see the module's doc)."""
    spec: ModelSpec = parse_spec(spec_text)
    if spec.kind == "http":
        return HttpReranker(spec.target, key)
    if spec.kind == "onnx":
        return OnnxReranker(Path(spec.target), spec.id)
    if spec.kind == "st":
        return CrossEncoderReranker(spec.target, spec.id)
    raise RerankError(
        f"TERAG_RERANKER={spec_text!r} is no reranker: name a cross-encoder (st:<name or "
        "folder>), an ONNX folder (onnx:<folder>) or a rerank endpoint's URL"
    )
