"""What every embedding backend shares: its vector type, backend names and error, and the
import of the optional `st` extra."""

from __future__ import annotations

import importlib
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from terag_neo4j.errors import DependencyError, TeragError


class EmbeddingError(TeragError, RuntimeError):
    """An embedding model that cannot be loaded or converted; the message says which and why."""


Vectors = npt.NDArray[np.float32]


Backend = Literal["auto", "torch", "openvino"]


ST_EXTRA = "pip install 'terag-neo4j[st]'"


def import_st(module: str, needed_for: str) -> Any:
    """`module` of the `st` extra (torch, sentence_transformers, transformers), imported only on
    the paths that need it: the default models are ONNX and run without torch."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise DependencyError(
            f"{needed_for} needs torch and sentence-transformers (the st extra): {ST_EXTRA}"
        ) from e
