"""Bring-your-own embedding models, end to end on the real Neo4j with tiny models made here
(tests/fixtures/tiny_models.py): a sentence-transformers folder, the same encoder as an ONNX
folder, and an OpenAI-compatible endpoint (a local stand-in computing with the same model). A
namespace records the model's identity and dimension, its vector index takes that dimension,
and a model of another identity or dimension is refused in one line naming the model to set."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import SecretStr

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.concepts import Concept
from terag_neo4j.core.documents import Document
from terag_neo4j.embeddings import Embedder, EmbeddingError
from terag_neo4j.indexing.pipeline import Indexer
from terag_neo4j.store import GraphStoreError
from tests.fixtures.standin_endpoints import KEY, StandIn
from tests.fixtures.tiny_models import WIDTH, TinyModels

from .conftest import SAMPLE

pytestmark = pytest.mark.integration
QUESTION = "Which city is the headquarters of Volkswagen?"


def recorded(client: TeragClient, namespace: str) -> tuple[str, int]:
    row = client.store.read("namespace_version", namespace=namespace)[0]
    return row["embedding_model"], row["embedding_dimensions"]


def test_a_sentence_transformers_folder_sizes_and_records_the_namespace(
    base_settings: Settings, namespace: str, tiny_models: TinyModels
) -> None:
    spec = f"st:{tiny_models.bi_encoder}"
    with TeragClient(
        base_settings, namespace=namespace, embedding_model=spec, synonym_threshold=0.1
    ) as client:
        report = client.index([SAMPLE], progress=False)
        assert recorded(client, namespace) == (str(tiny_models.bi_encoder), WIDTH)
        assert client.store.embedding_model.dimensions(namespace) == WIDTH
        # the shared concept index holds 384-dimensional vectors: these are linked by a scan
        assert report.synonym_links > 0
        for mode in ("pagerank", "dense", "flat"):
            assert client.retrieve(QUESTION, mode=mode).passages, mode  # type: ignore[arg-type]
        misspelt = [Concept("other", "Volkswagn")]
        emb = client.namespace_embedder(namespace)
        matches = client.retriever.match(namespace, "Volkswagn", misspelt, emb)
        assert matches and {m.match for m in matches} == {"semantic"}


def test_the_onnx_folder_computes_the_models_vectors(
    base_settings: Settings, namespace: str, tiny_models: TinyModels
) -> None:
    texts = ["Wolfsburg is the home of Volkswagen.", "Porsche designed the Beetle."]
    home = base_settings.home
    torch_vecs = Embedder(f"st:{tiny_models.bi_encoder}", backend="torch", home=home).embed(texts)
    onnx = Embedder(f"onnx:{tiny_models.bi_encoder_onnx}", home=home)
    onnx_vecs = onnx.embed(texts)
    assert onnx.dimensions == WIDTH
    assert np.allclose((torch_vecs * onnx_vecs).sum(axis=1), 1.0, atol=1e-3)

    spec = f"onnx:{tiny_models.bi_encoder_onnx}"
    with TeragClient(base_settings, namespace=namespace, embedding_model=spec) as client:
        client.index([SAMPLE], progress=False)
        assert recorded(client, namespace) == (spec, WIDTH)
        assert client.retrieve(QUESTION, mode="dense").passages


def test_an_openai_compatible_endpoint_with_its_key_from_settings(
    base_settings: Settings, namespace: str, standin: StandIn, tiny_models: TinyModels
) -> None:
    settings = base_settings.with_overrides(
        embedding_model="openai:tiny-embed",
        embedding_url=f"{standin.url}/v1",
        embedding_api_key=SecretStr(KEY),
    )
    with TeragClient(settings, namespace=namespace) as client:
        client.index([SAMPLE], progress=False)
        assert recorded(client, namespace) == ("openai:tiny-embed", WIDTH)
        dense = client.retrieve(QUESTION, mode="dense").passages
    assert dense and all(r.get("model") == "tiny-embed" for r in standin.requests)
    # the same vectors as the model's own: the endpoint is only the transport
    local = Embedder(f"st:{tiny_models.bi_encoder}", backend="torch").embed([QUESTION])[0]
    remote = Embedder("openai:tiny-embed", settings=settings).embed_query(QUESTION)
    assert float(local @ remote) > 0.9999

    wrong = settings.with_overrides(embedding_api_key=SecretStr("sk-wrong"))
    with pytest.raises(EmbeddingError, match="HTTP 401") as refused:
        Embedder("openai:tiny-embed", settings=wrong).embed(["x"])
    assert "sk-wrong" not in str(refused.value)


def test_a_hub_model_this_machine_cannot_fetch_is_refused_in_one_line() -> None:
    """Offline (the tests set HF_HUB_OFFLINE), a hub name that is not in the cache: the error
    names the model and what to do, where the hub client's OSError reached the service as a 500
    "unexpected error" with its traceback."""
    embedder = Embedder("st:terag-tests/no-such-model", backend="torch")
    with pytest.raises(EmbeddingError, match="terag-tests/no-such-model cannot be loaded") as e:
        embedder.embed_query(QUESTION)
    assert "\n" not in str(e.value) and "local model folder" in str(e.value)


def test_a_model_of_another_dimension_under_the_same_name_is_refused(
    base_settings: Settings, namespace: str, standin: StandIn
) -> None:
    settings = base_settings.with_overrides(
        embedding_model="openai:tiny-embed",
        embedding_url=f"{standin.url}/v1",
        embedding_api_key=SecretStr(KEY),
    )
    with TeragClient(settings, namespace=namespace) as client:
        client.index([SAMPLE / "beetle.md"], progress=False)
    standin.dimensions = 16  # the provider's model changed behind the same name
    try:
        with TeragClient(settings, namespace=namespace) as client:
            with pytest.raises(GraphStoreError) as refused:
                client.index([SAMPLE / "porsche.md"], progress=False)
            assert recorded(client, namespace) == ("openai:tiny-embed", WIDTH)
    finally:
        standin.dimensions = None
    message = str(refused.value)
    assert "\n" not in message and "TERAG_EMBEDDING_MODEL" in message
    assert "16" in message and str(WIDTH) in message


def test_a_model_of_another_identity_is_refused_in_one_line(
    base_settings: Settings, namespace: str, tiny_models: TinyModels
) -> None:
    built_with = f"st:{tiny_models.bi_encoder}"
    with TeragClient(base_settings, namespace=namespace, embedding_model=built_with) as client:
        client.index([SAMPLE / "beetle.md"], progress=False)
        other = Embedder(f"onnx:{tiny_models.bi_encoder_onnx}")
        indexer = Indexer(client.settings, client.store, client.extractor, other, client.cache)
        doc = Document(id="extra", title="Extra", text="Wolfsburg lies on the Aller.")
        with pytest.raises(GraphStoreError) as refused:
            indexer.index([doc], namespace, progress=False)
    message = str(refused.value)
    assert "\n" not in message
    assert f"TERAG_EMBEDDING_MODEL={tiny_models.bi_encoder}" in message


def test_prefixes_follow_the_model_family_and_the_settings() -> None:
    e5 = Embedder("st:intfloat/e5-small-v2")
    assert (e5.query_prefix, e5.passage_prefix) == ("query: ", "passage: ")
    nomic = Embedder("ollama:nomic-embed-text")
    assert (
        nomic.query_prefix == "search_query: " and nomic.spec.id == "ollama:nomic-embed-text:latest"
    )
    assert Embedder("bge-small-en-v1.5").query_prefix == ""
