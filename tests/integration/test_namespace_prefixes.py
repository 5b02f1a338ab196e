"""A namespace is embedded with the query and passage prefixes it recorded, whatever the settings
say now (they pick those of new namespaces), on the real Neo4j with the tiny ONNX model; one
built before prefixes were recorded keeps its model family's."""

from __future__ import annotations

import numpy as np
import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.embeddings import CachedEmbedder, Embedder
from tests.fixtures.tiny_models import TinyModels

from .conftest import SAMPLE

pytestmark = pytest.mark.integration
QUESTION = "Who designed the Volkswagen Beetle?"
EXTRA = Document(id="bonn", title="Bonn", text="Bonn is on the Rhine.")
# Words of the tiny model's vocabulary (the sample corpus's): other words would all be [UNK]
ASK, DOC, ASK_NOW, DOC_NOW = "city ", "car ", "company ", "state "


def recorded_prefixes(client: TeragClient, namespace: str) -> tuple[str | None, str | None]:
    row = client.store.read("namespace_version", namespace=namespace)[0]
    return row["embedding_query_prefix"], row["embedding_passage_prefix"]


def stored_vector(client: TeragClient, namespace: str, doc_id: str) -> np.ndarray:
    records = client.store.driver.execute_query(
        "MATCH (p:Passage {namespace: $ns, doc_id: $doc}) RETURN p.embedding AS v",
        ns=namespace,
        doc=doc_id,
    ).records
    return np.asarray(records[0]["v"], dtype=np.float32)


def bare(spec: str, settings: Settings) -> Embedder:
    """The model without any prefix: texts are embedded exactly as given."""
    return Embedder(spec, prefixes=("", ""), home=settings.home)


def test_a_namespace_keeps_the_prefixes_it_recorded(
    base_settings: Settings, namespace: str, tiny_models: TinyModels
) -> None:
    spec = f"onnx:{tiny_models.bi_encoder_onnx}"
    built = base_settings.with_overrides(
        embedding_model=spec,
        embedding_query_prefix=ASK,
        embedding_passage_prefix=DOC,
    )
    with TeragClient(built, namespace=namespace) as client:
        client.index([SAMPLE / "beetle.md"], progress=False)
        assert recorded_prefixes(client, namespace) == (ASK, DOC)
        want = [p.id for p in client.retrieve(QUESTION, mode="dense").passages]

    model = bare(spec, base_settings)
    now = built.with_overrides(embedding_query_prefix=ASK_NOW, embedding_passage_prefix=DOC_NOW)
    with TeragClient(now, namespace=namespace) as client:
        row = client.store.read("namespace_version", namespace=namespace)[0]
        # the embedder the retriever picks for the namespace (the same call `retrieve` makes)
        emb = client.retriever.embedders.for_namespace(namespace, row)
        question = np.asarray(client.retriever.embed_query(QUESTION, emb), dtype=np.float32)
        assert float(question @ model.embed([ASK + QUESTION])[0]) > 0.9999
        assert float(question @ model.embed([ASK_NOW + QUESTION])[0]) < 0.9999
        # the settings' prefixes still make new namespaces: the client's own embedder has them
        own = client.embedder.embedder
        assert (own.query_prefix, own.passage_prefix) == (ASK_NOW, DOC_NOW)
        assert isinstance(emb, CachedEmbedder) and emb.embedder._weights is own  # one model
        assert [p.id for p in client.retrieve(QUESTION, mode="dense").passages] == want

        # new passages get the recorded passage prefix, and the record stays
        client.index([EXTRA], progress=False)
        assert recorded_prefixes(client, namespace) == (ASK, DOC)
        stored = stored_vector(client, namespace, "bonn")
        text = "Bonn\nBonn is on the Rhine."
        assert float(stored @ model.embed([DOC + text])[0]) > 0.9999
        assert float(stored @ model.embed([DOC_NOW + text])[0]) < 0.9999


def test_a_namespace_recorded_before_prefixes_uses_its_models_family_prefixes(
    base_settings: Settings, namespace: str, tiny_models: TinyModels
) -> None:
    spec = f"onnx:{tiny_models.bi_encoder_onnx}"
    settings = base_settings.with_overrides(embedding_model=spec)
    with TeragClient(settings, namespace=namespace) as client:
        client.index([SAMPLE / "beetle.md"], progress=False)
        assert recorded_prefixes(client, namespace) == ("", "")  # the family's: none
        # as a namespace indexed before prefixes were recorded holds it
        client.store.driver.execute_query(
            "MATCH (n:Namespace {name: $ns}) "
            "REMOVE n.embedding_query_prefix, n.embedding_passage_prefix",
            ns=namespace,
        )
        assert recorded_prefixes(client, namespace) == (None, None)

    model = bare(spec, base_settings)
    now = settings.with_overrides(embedding_query_prefix=ASK_NOW, embedding_passage_prefix=DOC_NOW)
    with TeragClient(now, namespace=namespace) as client:
        emb = client.namespace_embedder(namespace)
        question = np.asarray(client.retriever.embed_query(QUESTION, emb), dtype=np.float32)
        assert float(question @ model.embed([QUESTION])[0]) > 0.9999
        assert client.retrieve(QUESTION, mode="dense").passages
        # its next ingest records the prefixes it embedded with
        client.index([EXTRA], progress=False)
        assert recorded_prefixes(client, namespace) == ("", "")
        stored = stored_vector(client, namespace, "bonn")
        assert float(stored @ model.embed(["Bonn\nBonn is on the Rhine."])[0]) > 0.9999
