"""Sentence embeddings for concepts, passages and query entities: `model` loads one (a packaged
ONNX export from `onnx`, run with OpenVINO; or a sentence-transformers model, the `st` extra,
run with torch or, exported once, with OpenVINO: `openvino`); `quiet` holds back third-party
warnings while it converts; `tokenizer` sizes passages without transformers."""

from terag_neo4j.embeddings.base import Backend, EmbeddingError, Vectors
from terag_neo4j.embeddings.model import (
    DEFAULT_MODEL,
    AnyEmbedder,
    CachedEmbedder,
    Embedder,
    cached_embedder,
    model_id,
    settings_embedder,
    settings_home,
)
from terag_neo4j.embeddings.openvino import openvino_available, openvino_precision

__all__ = [
    "DEFAULT_MODEL",
    "AnyEmbedder",
    "Backend",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingError",
    "Vectors",
    "cached_embedder",
    "model_id",
    "openvino_available",
    "openvino_precision",
    "settings_embedder",
    "settings_home",
]
