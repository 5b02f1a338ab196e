"""Sentence embeddings for concepts, passages and query entities: `model` loads one (a packaged
sentence-transformers model, or an ONNX export from `onnx`) and runs it with torch or, exported
once, with OpenVINO (`openvino`); `quiet` holds back third-party warnings while it converts."""

from terag_neo4j.embeddings.base import Backend, EmbeddingError, Vectors
from terag_neo4j.embeddings.model import (
    DEFAULT_MODEL,
    AnyEmbedder,
    CachedEmbedder,
    Embedder,
    cached_embedder,
    embedding_model_path,
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
    "embedding_model_path",
    "model_id",
    "openvino_available",
    "openvino_precision",
    "settings_embedder",
    "settings_home",
]
