"""TeragGraphRAGRetriever against the real Neo4j (sample corpus, spaCy query NER) and, through
neo4j-graphrag's own `OllamaLLM`, the real Ollama: what neo4j-graphrag's `GraphRAG` pipeline and
tools see of it. The docs' example runs in test_docs_examples.py."""

from __future__ import annotations

from collections.abc import Iterator

import neo4j
import pytest
from neo4j import GraphDatabase
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.llm import OllamaLLM
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.tool import IntegerParameter, StringParameter
from neo4j_graphrag.types import RetrieverResult, RetrieverResultItem

from terag_neo4j import SettingsError, TeragClient, TeragGraphRAGRetriever
from terag_neo4j.config import Settings
from terag_neo4j.integrations.langchain import passage_content
from tests.fixtures.neo4j import Neo4jConn

pytestmark = pytest.mark.integration

QUESTION = "Who designed the Volkswagen Beetle?"


@pytest.fixture
def driver(neo4j_conn: Neo4jConn) -> Iterator[neo4j.Driver]:
    d = GraphDatabase.driver(neo4j_conn.uri, auth=(neo4j_conn.user, neo4j_conn.password))
    try:
        yield d
    finally:
        d.close()


def test_search_returns_the_clients_retrieval_as_a_retriever_result(
    sample_client: TeragClient, base_settings: Settings, driver: neo4j.Driver
) -> None:
    ns = sample_client.settings.namespace
    with TeragGraphRAGRetriever(driver, namespace=ns, settings=base_settings) as retriever:
        assert isinstance(retriever, Retriever)
        assert retriever.client.store.driver is driver
        result = retriever.search(query_text=QUESTION, top_k=3)
        expected = sample_client.retrieve(QUESTION, top_k=3)
    driver.verify_connectivity()  # the retriever closed its client, not the caller's driver

    assert isinstance(result, RetrieverResult) and len(result.items) == 3
    assert [i.content for i in result.items] == [passage_content(p) for p in expected.passages]
    first = result.items[0].metadata or {}
    assert first["passage_id"] == expected.passages[0].id
    assert first["score"] == pytest.approx(expected.passages[0].score)
    assert first["score_kind"] == "pagerank_mass"
    meta = result.metadata or {}
    assert meta["__retriever"] == "TeragGraphRAGRetriever"
    assert (meta["mode"], meta["score_kind"], meta["fallback_reason"]) == (
        "pagerank",
        "pagerank_mass",
        None,
    )
    assert {c["name"] for c in meta["matched_concepts"]} == {m.name for m in expected.matches}
    assert any("beetle" in (i.metadata or {})["doc_id"] for i in result.items)


def test_per_call_mode_custom_formatter_and_a_shared_client(sample_client: TeragClient) -> None:
    def formatter(record: neo4j.Record) -> RetrieverResultItem:
        return RetrieverResultItem(content=record["title"], metadata={"id": record["doc_id"]})

    retriever = TeragGraphRAGRetriever(client=sample_client, result_formatter=formatter)
    dense = retriever.search(query_text=QUESTION, top_k=2, mode="dense")
    assert (dense.metadata or {})["score_kind"] == "cosine"
    assert all(isinstance(i.content, str) and "\n" not in i.content for i in dense.items)
    assert len(dense.items) == 2
    retriever.close()
    # a shared client stays open
    assert sample_client.retrieve(QUESTION, top_k=1).passages
    with pytest.raises(SettingsError, match="not both"):
        TeragGraphRAGRetriever(client=sample_client, extractor="spacy")


def test_tool_parameters_are_typed(sample_client: TeragClient) -> None:
    # What an agent's tool call sees: a required string question, an integer top_k.
    params = TeragGraphRAGRetriever(client=sample_client).get_parameters()
    assert params.required_properties == ["query_text"]
    assert isinstance(params.properties["query_text"], StringParameter)
    assert isinstance(params.properties["top_k"], IntegerParameter)


@pytest.mark.ollama
def test_graphrag_pipeline_answers_with_a_real_ollama_llm(
    sample_client: TeragClient, ollama_settings: Settings
) -> None:
    """neo4j-graphrag's GraphRAG with its own OllamaLLM on the project's Ollama server."""
    prompts: list[str] = []

    class RecordingOllamaLLM(OllamaLLM):  # the real LLM; only keeps what it was sent
        def invoke(self, input, *args, **kwargs):  # type: ignore[no-untyped-def]
            prompts.append(str(input))
            return super().invoke(input, *args, **kwargs)

    llm = RecordingOllamaLLM(
        model_name=ollama_settings.llm_model,
        model_params={"options": {"temperature": 0, "num_predict": 48}},
        host=ollama_settings.ollama_host,
    )
    retriever = TeragGraphRAGRetriever(client=sample_client)
    rag = GraphRAG(retriever=retriever, llm=llm)
    response = rag.search(query_text=QUESTION, retriever_config={"top_k": 3}, return_context=True)

    assert response.retriever_result is not None
    items = response.retriever_result.items
    assert len(items) == 3
    (prompt,) = prompts
    assert all(str(i.content) in prompt.replace("\\n", "\n") for i in items)
    assert QUESTION in prompt
    assert "Porsche" in response.answer
