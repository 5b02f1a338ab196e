"""A LangChain chat model as the LLM: `langchain-ollama`'s `ChatOllama` on the session's real
Ollama, handed to `TeragClient(llm=...)` and `AsyncTeragClient(llm=...)`: it extracts, does
query NER and answers, and its `usage_metadata` fills the ledger.

SmolLM2-135M is weak: these tests check plumbing and token accounting, not answer quality.
"""

from __future__ import annotations

from typing import Any

import pytest

from terag_neo4j.aio import AsyncTeragClient
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.llm import Stage

from .conftest import SAMPLE

pytestmark = [pytest.mark.integration, pytest.mark.ollama]
langchain_ollama = pytest.importorskip("langchain_ollama")

QUESTION = "Who designed the Volkswagen Beetle?"


def chat_model(ollama_settings: Settings) -> Any:
    return langchain_ollama.ChatOllama(
        model=ollama_settings.llm_model,
        base_url=ollama_settings.ollama_host,
        temperature=0,
        num_predict=ollama_settings.llm_max_tokens,
    )


def test_index_and_answer_with_a_langchain_chat_model(
    base_settings: Settings, ollama_settings: Settings, namespace: str
) -> None:
    settings = base_settings.with_overrides(extractor="ollama")
    chat = chat_model(ollama_settings)
    docs = sorted(SAMPLE.glob("*.md"))[:2]
    with TeragClient(settings, namespace=namespace, llm=chat, retrieval={"linking": "ner"}) as c:
        report = c.index(docs, progress=False)
        assert report.passages_new == 2 and report.extracted_fresh == 2
        assert report.input_tokens > 100 * 2 and report.output_tokens > 0
        assert report.tokens_unknown == 0
        ledger = c.ledger.totals(stage=Stage.EXTRACTION, run_id=report.run_id)
        assert (ledger.calls, ledger.input_tokens, ledger.output_tokens, ledger.uncounted) == (
            2,
            report.input_tokens,
            report.output_tokens,
            0,
        )
        # The namespace records the chat model that extracted it
        info = c.stats()
        assert info.model == f"langchain:ChatOllama:{ollama_settings.llm_model}"
        ans = c.answer(QUESTION, top_k=2)
        assert ans.answer
        answered = c.ledger.totals(stage=Stage.ANSWER)
        assert answered.calls == 1 and answered.uncounted == 0
        assert ans.input_tokens == answered.input_tokens and answered.input_tokens > 50
        assert c.ledger.totals(stage=Stage.QUERY_NER).calls == 1


@pytest.mark.asyncio
async def test_async_client_takes_a_chat_model(
    base_settings: Settings, ollama_settings: Settings, namespace: str
) -> None:
    settings = base_settings.with_overrides(extractor="spacy")
    docs = sorted(SAMPLE.glob("*.md"))[:2]
    async with AsyncTeragClient(
        settings, namespace=namespace, llm=chat_model(ollama_settings)
    ) as c:
        await c.index(docs, progress=False)
        ans = await c.answer(QUESTION, top_k=2)
        assert ans.answer and ans.input_tokens is not None and ans.input_tokens > 50
        assert c.sync.ledger.totals(stage=Stage.ANSWER).calls == 1
