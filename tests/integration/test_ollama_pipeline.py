"""The LLM path end to end: a real Ollama (SmolLM2) extracting into a real Neo4j, then answering.

SmolLM2-135M is weak: these tests check plumbing and token accounting, not answer quality.
"""

from __future__ import annotations

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.llm import Stage

from .conftest import SAMPLE

pytestmark = [pytest.mark.integration, pytest.mark.ollama]


@pytest.fixture
def llm_settings(base_settings: Settings, ollama_settings: Settings) -> Settings:
    return base_settings.model_copy(
        update={
            "extractor": "ollama",
            "ollama_host": ollama_settings.ollama_host,
            "llm_model": ollama_settings.llm_model,
        }
    )


def test_ollama_extraction_counts_every_token(llm_settings: Settings, namespace: str) -> None:
    docs = sorted(SAMPLE.glob("*.md"))[:3]
    with TeragClient(llm_settings, namespace=namespace) as c:
        report = c.index(docs, progress=False)
        assert report.passages_new == 3 and report.extracted_fresh == 3
        assert report.input_tokens > 100 * 3 and report.output_tokens > 0
        ledger = c.ledger.totals(stage=Stage.EXTRACTION, run_id=report.run_id)
        assert (ledger.input_tokens, ledger.output_tokens) == (
            report.input_tokens,
            report.output_tokens,
        )
        assert ledger.calls == 3 and ledger.items == 3
        info = c.stats()
        assert info.input_tokens == report.input_tokens  # persisted with the IngestRun
        assert info.concepts > 0  # even a 135M model names some entities in these passages

        # Same input again: nothing is paid twice.
        again = c.index(docs, progress=False)
        assert again.input_tokens == again.output_tokens == 0 and again.passages_new == 0


def test_batched_extraction_shares_the_prompt(llm_settings: Settings, namespace: str) -> None:
    docs = sorted(SAMPLE.glob("*.md"))[:4]
    with TeragClient(llm_settings, namespace=namespace, extraction_batch=2) as c:
        report = c.index(docs, progress=False)
        ledger = c.ledger.totals(stage=Stage.EXTRACTION, run_id=report.run_id)
        assert ledger.calls == 2 and ledger.items == 4
        assert (ledger.input_tokens, ledger.output_tokens) == (
            report.input_tokens,
            report.output_tokens,
        )
        assert report.passages_new == 4


def test_lean_prompt_indexes_untyped_names_in_batches(
    llm_settings: Settings, namespace: str
) -> None:
    docs = sorted(SAMPLE.glob("*.md"))[:4]
    with TeragClient(
        llm_settings, namespace=namespace, extraction_batch=2, extraction_prompt="lean"
    ) as c:
        assert c.extractor.version == "terag-ner-lean-v1-batch2"
        report = c.index(docs, progress=False)
        ledger = c.ledger.totals(stage=Stage.EXTRACTION, run_id=report.run_id)
        assert ledger.calls == 2 and ledger.items == 4
        assert report.passages_new == 4 and report.output_tokens > 0
        assert (ledger.input_tokens, ledger.output_tokens) == (
            report.input_tokens,
            report.output_tokens,
        )


def test_answer_counts_ner_and_reader_tokens(llm_settings: Settings, namespace: str) -> None:
    with TeragClient(
        llm_settings.model_copy(update={"extractor": "spacy"}), namespace=namespace
    ) as c:
        c.index([SAMPLE], progress=False)
    with TeragClient(llm_settings, namespace=namespace) as c:
        # The default names linking spends no tokens; the paper's query NER goes through Ollama.
        linked = c.retrieve("Who designed the Volkswagen Beetle?", top_k=3)
        assert (linked.input_tokens, linked.output_tokens) == (0, 0) and not c.ledger.calls
    with TeragClient(
        llm_settings,
        namespace=namespace,
        retrieval={"linking": "ner"},
        query_extractor="ollama",
    ) as c:
        ans = c.answer("Who designed the Volkswagen Beetle?", top_k=3)
        assert isinstance(ans.answer, str) and ans.answer
        assert ans.input_tokens > 0 and ans.output_tokens > 0
        assert len(ans.retrieval.passages) == 3
        by_stage = c.ledger.by_stage()
        assert by_stage[Stage.ANSWER].input_tokens == ans.input_tokens
        assert by_stage[Stage.QUERY_NER].calls == 1
        assert ans.retrieval.input_tokens == by_stage[Stage.QUERY_NER].input_tokens
