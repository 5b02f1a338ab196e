"""An embedding model on Ollama (`ollama:<model>`): the tiny bi-encoder converted here to GGUF
(tests/fixtures/tiny_gguf.py) and created on a real Ollama server (the project's build), whose
`/api/embed` then computes the model's own vectors; a namespace built with it records
`ollama:<model>:latest` and its dimension."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.embeddings import Embedder
from terag_neo4j.local import ollama as srv
from tests.fixtures.settings import fixture_settings
from tests.fixtures.tiny_gguf import bert_to_gguf
from tests.fixtures.tiny_models import WIDTH, TinyModels

from .conftest import SAMPLE

pytestmark = [pytest.mark.integration, pytest.mark.ollama]
MODEL = "terag-test-tiny-embed"


@pytest.fixture(scope="module")
def ollama_host(tiny_models: TinyModels, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An Ollama server of the project's build (its own, on a free port) holding the tiny model."""
    import ollama

    gguf = bert_to_gguf(
        tiny_models.bi_encoder.parent / "bert",
        tiny_models.vocab,
        tmp_path_factory.mktemp("gguf") / "tiny.gguf",
    )
    server = srv.start(fixture_settings())
    try:
        client = ollama.Client(host=server.host)
        client.create(model=MODEL, files={gguf.name: client.create_blob(gguf)}, stream=False)
        yield server.host
    finally:
        srv.stop(server)


def test_ollama_computes_the_models_vectors(
    ollama_host: str, tiny_models: TinyModels, base_settings: Settings
) -> None:
    texts = ["Wolfsburg is the home of Volkswagen.", "Porsche designed the Beetle."]
    settings = base_settings.with_overrides(ollama_host=ollama_host)
    served = Embedder(f"ollama:{MODEL}", settings=settings)
    assert served.dimensions == WIDTH and served.backend == "ollama"
    local = Embedder(f"st:{tiny_models.bi_encoder}", backend="torch").embed(texts)
    assert np.allclose((served.embed(texts) * local).sum(axis=1), 1.0, atol=1e-3)


def test_a_namespace_built_with_an_ollama_model(
    ollama_host: str, base_settings: Settings, namespace: str
) -> None:
    settings = base_settings.with_overrides(
        ollama_host=ollama_host, embedding_model=f"ollama:{MODEL}"
    )
    with TeragClient(settings, namespace=namespace) as client:
        client.index([SAMPLE], progress=False)
        row = client.store.read("namespace_version", namespace=namespace)[0]
        assert (row["embedding_model"], row["embedding_dimensions"]) == (
            f"ollama:{MODEL}:latest",
            WIDTH,
        )
        assert client.store.embedding_model.dimensions(namespace) == WIDTH
        assert client.retrieve("Who designed the Beetle?", mode="dense").passages
