"""TeragRetriever against the real stack: Neo4j + GDS, spaCy query NER, the sample corpus.

`TestTeragRetrieverStandard` runs langchain-tests' standard retriever suite; the other tests check
what the suite cannot: that the documents are exactly the client's retrieval, and that the
retriever composes into an LCEL chain.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_tests.integration_tests import RetrieversIntegrationTests

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.integrations.langchain import TeragRetriever, passage_content

pytestmark = pytest.mark.integration

QUESTION = "Where are the headquarters of the company that makes the Beetle?"


# The suite's async test carries no asyncio marker (langchain runs it with asyncio_mode=auto), and
# the suite forbids overriding its tests: the class-level marker makes pytest-asyncio run it (and
# pytest-asyncio's note that the sync tests of the class carry it too is expected).
@pytest.mark.asyncio
@pytest.mark.filterwarnings(
    "ignore:The test <Function test_.*is marked with '@pytest.mark.asyncio'"
)
class TestTeragRetrieverStandard(RetrieversIntegrationTests):
    client: TeragClient

    @pytest.fixture(autouse=True)
    def _client(self, sample_client: TeragClient) -> None:
        self.client = sample_client

    @property
    def retriever_constructor(self) -> type[TeragRetriever]:
        return TeragRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"client": self.client, "k": 4}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION


def test_documents_are_the_clients_retrieval(sample_client: TeragClient) -> None:
    retriever = TeragRetriever(client=sample_client, k=3)
    docs = retriever.invoke(QUESTION)
    res = sample_client.retrieve(QUESTION, top_k=3)
    assert res.mode == "pagerank" and len(res.passages) == 3
    assert [d.metadata["passage_id"] for d in docs] == [p.id for p in res.passages]
    assert [d.page_content for d in docs] == [passage_content(p) for p in res.passages]
    assert [d.metadata["score"] for d in docs] == pytest.approx([p.score for p in res.passages])
    meta = docs[0].metadata
    assert meta["namespace"] == sample_client.settings.namespace
    assert meta["mode"] == "pagerank"
    assert meta["title"] and meta["doc_id"]
    concepts = meta["matched_concepts"]
    assert concepts and {"name", "type", "match", "weight"} == set(concepts[0])
    assert {c["name"] for c in concepts} == {m.name for m in res.matches}
    assert any(d.metadata["passage_id"].endswith("beetle.md") for d in docs)


@pytest.mark.asyncio
async def test_async_and_per_call_options(sample_client: TeragClient) -> None:
    retriever = TeragRetriever(client=sample_client, k=5)
    sync_ids = [d.id for d in retriever.invoke(QUESTION, k=2)]
    async_docs = await retriever.ainvoke(QUESTION, k=2)
    assert [d.id for d in async_docs] == sync_ids and len(sync_ids) == 2
    dense = await retriever.ainvoke(QUESTION, k=2, mode="dense")
    assert {d.metadata["mode"] for d in dense} == {"dense"}


def test_retriever_builds_and_closes_its_own_client(
    sample_client: TeragClient, base_settings: Settings
) -> None:
    settings = base_settings.model_copy(update={"namespace": sample_client.settings.namespace})
    retriever = TeragRetriever(settings=settings, k=2)
    try:
        docs = retriever.invoke(QUESTION)
        assert len(docs) == 2
        assert retriever.terag() is retriever.terag()
    finally:
        retriever.close()


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(f"[{i}] {d.page_content}" for i, d in enumerate(docs, 1))


def test_lcel_chain_feeds_the_passages_into_the_prompt(sample_client: TeragClient) -> None:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from the passages only."),
            ("human", "Passages:\n{context}\n\nQuestion: {question}"),
        ]
    )
    retriever = TeragRetriever(client=sample_client, k=3)
    chain = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt
    value = chain.invoke(QUESTION)
    human = value.to_messages()[-1].content
    assert isinstance(human, str)
    assert human.endswith(f"Question: {QUESTION}")
    assert "[1] " in human and "[3] " in human and "[4] " not in human
    assert "Beetle" in human


@pytest.mark.ollama
def test_lcel_chain_answers_with_the_reader_llm(
    sample_client: TeragClient, ollama_settings: Settings
) -> None:
    """The LCEL chain of docs/integrations.md end to end, the project's Ollama model standing in
    for ChatOllama."""
    from terag_neo4j.llm import OllamaLLM, Stage, TokenLedger

    llm = OllamaLLM(ollama_settings, TokenLedger())
    try:
        prompt = ChatPromptTemplate.from_messages(
            [
                ("system", "Answer from the passages. Reply with the answer only: a few words."),
                ("human", "Passages:\n{context}\n\nQuestion: {question}\nAnswer:"),
            ]
        )

        def generate(value: Any) -> str:
            return llm.complete(value.to_string(), stage=Stage.ANSWER).text

        retriever = TeragRetriever(client=sample_client, k=3)
        chain = (
            {"context": retriever | format_docs, "question": RunnablePassthrough()}
            | prompt
            | RunnableLambda(generate)
            | StrOutputParser()
        )
        answer = chain.invoke("Which city is the headquarters of Volkswagen?")
        # SmolLM2-135M is too weak to grade on content: check the plumbing and the accounting.
        assert isinstance(answer, str) and answer.strip()
        (call,) = llm.ledger.calls
        assert call.stage == Stage.ANSWER and call.output_tokens > 0
        # The prompt carried the three retrieved passages (tokens well beyond the bare question).
        assert call.input_tokens > 100
    finally:
        llm.close()


@pytest.mark.parametrize(
    ("mode", "kind"), [("pagerank", "pagerank_mass"), ("dense", "cosine"), ("hybrid", "rrf")]
)
def test_metadata_says_what_the_score_is(sample_client: TeragClient, mode: str, kind: str) -> None:
    docs = TeragRetriever(client=sample_client, k=3, mode=mode).invoke(QUESTION)  # type: ignore[arg-type]
    assert {(d.metadata["mode"], d.metadata["score_kind"]) for d in docs} == {(mode, kind)}
    assert {d.metadata["fallback_reason"] for d in docs} == {None}
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)
    if kind == "cosine":  # Neo4j's vector index score, (1 + cos) / 2
        assert all(0.0 <= s <= 1.0 for s in scores)
    if kind == "rrf":  # 1/(60 + rank) per ranking it is in, two rankings at most
        assert all(0.0 < s <= 2 / 61 for s in scores)


def test_metadata_says_why_the_walk_fell_back(sample_client: TeragClient) -> None:
    # No concept of the graph in the question: the walk has nothing to start from.
    docs = TeragRetriever(client=sample_client, k=2).invoke("What happened after that?")
    meta = docs[0].metadata
    assert meta["fallback_reason"] and meta["mode"] in ("dense", "pagerank")
    res = sample_client.retrieve("What happened after that?", top_k=2)
    assert meta["fallback_reason"] == res.fallback_reason
    assert meta["score_kind"] == res.score_kind


def test_add_documents_then_delete_in_langchains_spirit(spacy_client: TeragClient) -> None:
    retriever = TeragRetriever(client=spacy_client, k=3)
    docs = [
        Document(
            page_content="Ferdinand Piëch led Volkswagen from 1993 and bought Bugatti in 1998.",
            metadata={"source": "notes/piech.md", "title": "Ferdinand Piëch"},
        ),
        Document(
            page_content="Bugatti builds the Chiron in Molsheim, Alsace.",
            id="bugatti",
            metadata={"title": "Bugatti"},
        ),
    ]
    ids = retriever.add_documents(docs)
    assert ids == ["notes/piech.md", "bugatti"]
    assert spacy_client.stats().passages == 2

    found = retriever.invoke("Where does Bugatti build the Chiron?")
    assert found[0].metadata["doc_id"] == "bugatti"
    assert found[0].page_content.startswith("Bugatti\n")  # the title as indexed

    assert retriever.delete(["bugatti"]) is True
    assert {d.metadata["doc_id"] for d in retriever.invoke("Bugatti Chiron")} == {"notes/piech.md"}
    assert retriever.delete(["bugatti"]) is False  # nothing left to remove
    assert spacy_client.stats().passages == 1


@pytest.mark.asyncio
async def test_async_add_and_delete(spacy_client: TeragClient) -> None:
    retriever = TeragRetriever(client=spacy_client, k=1)
    doc = Document(page_content="Wolfsburg lies on the Aller river.", id="aller")
    assert await retriever.aadd_documents([doc]) == ["aller"]
    assert (await retriever.ainvoke("Which river is Wolfsburg on?"))[0].id == "aller"
    assert await retriever.adelete(["aller"]) is True


def test_client_index_takes_langchain_documents(spacy_client: TeragClient) -> None:
    # What a LangChain loader returns goes straight into index(), mixed with our own Documents.
    from terag_neo4j import Document as TeragDocument

    loaded = [
        Document(
            page_content="Hanover is the capital of Lower Saxony.", metadata={"source": "a.txt"}
        ),
        Document(page_content="Brunswick is a city in Lower Saxony.", metadata={"source": "b.txt"}),
    ]
    report = spacy_client.index(
        [*loaded, TeragDocument(id="c", text="Oldenburg is a city.")], progress=False
    )
    assert report.passages_new == 3
    res = spacy_client.retrieve("What is the capital of Lower Saxony?", top_k=1)
    assert res.passages[0].doc_id == "a.txt"
    # one LangChain document on its own is one document, not its fields
    assert spacy_client.index(loaded[0], progress=False).passages_unchanged == 1
