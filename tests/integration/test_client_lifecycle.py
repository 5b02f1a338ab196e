"""What a client holds is let go: `drop` removes a namespace's GDS projections without building
the retriever and never leaves them behind; `close` closes the LLM client, and a
LangChain retriever closes the client it built when it goes."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from neo4j.exceptions import Neo4jError

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.integrations.langchain import TeragRetriever
from terag_neo4j.store import GraphStore, GraphStoreError, gds

from .conftest import SAMPLE

pytestmark = pytest.mark.integration
QUESTION = "Which city is the headquarters of Volkswagen?"


def projections(store: GraphStore, namespace: str) -> set[str]:
    return gds.projections(store, namespace)


def test_drop_removes_projections_without_building_the_retriever(
    base_settings: Settings, namespace: str, tmp_path: Path
) -> None:
    with TeragClient(base_settings, namespace=namespace) as reader:
        reader.index([SAMPLE], progress=False)
        assert reader.retrieve(QUESTION).passages
        assert projections(reader.store, namespace)
    # An LLM client whose Ollama is nowhere: dropping needs neither it nor spaCy.
    dead = base_settings.with_overrides(extractor="ollama", ollama_host="http://127.0.0.1:9")
    with TeragClient(dead, namespace=namespace) as admin:
        admin.drop()
        assert admin._retriever is None and admin._extractor is None and admin._llm is None
        assert not projections(admin.store, namespace)
        assert not admin.store.namespaces.exists(namespace)


def test_a_drop_that_cannot_drop_the_projections_keeps_the_namespace(
    spacy_client: TeragClient, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spacy_client.index([SAMPLE], progress=False)
    assert spacy_client.retrieve(QUESTION).passages
    graphs = projections(spacy_client.store, namespace)
    assert graphs

    def failing_drop(store: GraphStore, graph: str) -> None:
        raise Neo4jError._hydrate_neo4j(
            code="Neo.ClientError.Procedure.ProcedureCallFailed",
            message="Failed to invoke procedure `gds.graph.drop`: Caused by: java.lang.Error",
        )

    monkeypatch.setattr(gds, "drop", failing_drop)
    with pytest.raises(GraphStoreError) as failed:
        spacy_client.drop()
    assert "\n" not in str(failed.value) and "GDS projections" in str(failed.value)
    # Nothing was dropped, so nothing is left in GDS memory without its namespace; a retry works.
    assert spacy_client.store.namespaces.exists(namespace)
    assert projections(spacy_client.store, namespace) == graphs
    monkeypatch.undo()
    spacy_client.drop()
    assert not projections(spacy_client.store, namespace)
    assert not spacy_client.store.namespaces.exists(namespace)


def test_close_closes_the_llm_client(base_settings: Settings, namespace: str) -> None:
    client = TeragClient(base_settings, namespace=namespace)
    http = client.llm._client._client  # the httpx client under ollama.Client
    assert not http.is_closed
    client.close()
    assert http.is_closed


def test_a_retriever_closes_the_client_it_built_when_it_goes(
    base_settings: Settings, namespace: str
) -> None:
    retriever = TeragRetriever(settings=base_settings.with_overrides(namespace=namespace))
    client = retriever.terag()
    http = client.llm._client._client
    driver = client.store.driver
    del retriever, client
    gc.collect()
    assert http.is_closed and driver._closed

    # ... and as a context manager
    with TeragRetriever(settings=base_settings.with_overrides(namespace=namespace)) as r:
        driver = r.terag().store.driver
    assert driver._closed
    # a client passed in is the caller's: it stays open
    with TeragClient(base_settings, namespace=namespace) as shared:
        with TeragRetriever(client=shared) as r:
            r.terag()
        del r
        gc.collect()
        assert not shared.store.driver._closed
