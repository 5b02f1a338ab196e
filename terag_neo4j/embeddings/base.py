"""What every embedding backend shares: its vector type, backend names and error."""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from terag_neo4j.errors import TeragError


class EmbeddingError(TeragError, RuntimeError):
    """An embedding model that cannot be loaded or converted; the message says which and why."""


Vectors = npt.NDArray[np.float32]


Backend = Literal["auto", "torch", "openvino"]
