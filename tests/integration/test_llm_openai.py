"""The `openai:` LLM backend against a real OpenAI-compatible server: the session's Ollama serves
one at `/v1`. Extraction, query NER and answers through it into and out of a real Neo4j, the
ledger's counts (the server's `usage`), a model the server does not have, and the same model
through both protocols at temperature 0 (the same concepts, the same token counts).

SmolLM2-135M is weak: these tests check plumbing and token accounting, not answer quality.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Passage
from terag_neo4j.indexing.extraction.ollama_extractor import OllamaExtractor
from terag_neo4j.llm import ModelNotFoundError, OllamaLLM, Stage, TokenLedger, make_llm
from terag_neo4j.llm.openai_chat import OpenAILLM

from .conftest import SAMPLE

pytestmark = [pytest.mark.integration, pytest.mark.ollama]
pytest.importorskip("openai")

QUESTION = "Who designed the Volkswagen Beetle?"


def openai_settings(base: Settings, ollama: Settings, model: str | None = None) -> Settings:
    return base.with_overrides(
        extractor="ollama",
        ollama_host=ollama.ollama_host,
        llm_model=f"openai:{model or ollama.llm_model}",
        llm_url=ollama.ollama_host.rstrip("/") + "/v1",
    )


@pytest.fixture
def openai_llm(base_settings: Settings, ollama_settings: Settings) -> Iterator[OpenAILLM]:
    llm = make_llm(openai_settings(base_settings, ollama_settings), TokenLedger())
    assert isinstance(llm, OpenAILLM)
    try:
        yield llm
    finally:
        llm.close()


def test_completion_counts_the_servers_usage(openai_llm: OpenAILLM) -> None:
    comp = openai_llm.complete("Name one colour.", stage=Stage.ANSWER, max_tokens=8)
    assert comp.text.strip()
    assert comp.input_tokens is not None and comp.input_tokens > 5
    assert comp.output_tokens is not None and 0 < comp.output_tokens <= 8
    totals = openai_llm.ledger.totals(stage=Stage.ANSWER)
    assert (totals.calls, totals.input_tokens, totals.output_tokens, totals.uncounted) == (
        1,
        comp.input_tokens,
        comp.output_tokens,
        0,
    )


def test_a_cap_reached_is_reported_as_cut(openai_llm: OpenAILLM) -> None:
    comp = openai_llm.complete(
        "Count from one to one hundred in words.", stage=Stage.ANSWER, max_tokens=3
    )
    assert comp.cut and comp.output_tokens == 3


def test_query_ner_through_openai_is_in_the_ledger(openai_llm: OpenAILLM) -> None:
    ext = OllamaExtractor(openai_llm, grounded=False)
    _, tin, tout = ext.extract_query(QUESTION, "q1")
    totals = openai_llm.ledger.totals(stage=Stage.QUERY_NER, run_id="q1")
    assert totals.calls == 1 and tin is not None and tin > 50 and tout is not None
    assert (totals.input_tokens, totals.output_tokens) == (tin, tout)


def test_an_unknown_model_is_one_line_listing_the_servers_models(
    base_settings: Settings, ollama_settings: Settings
) -> None:
    llm = make_llm(openai_settings(base_settings, ollama_settings, "no-such-model"))
    with pytest.raises(ModelNotFoundError) as err:
        llm.complete("hi", stage=Stage.ANSWER)
    message = str(err.value)
    assert "\n" not in message and "TERAG_LLM_MODEL" in message
    assert ollama_settings.llm_model in message  # the server's own model, listed
    with pytest.raises(ModelNotFoundError):
        llm.check_model()


def test_index_and_answer_through_openai(
    base_settings: Settings, ollama_settings: Settings, namespace: str
) -> None:
    settings = openai_settings(base_settings, ollama_settings)
    docs = sorted(SAMPLE.glob("*.md"))[:2]
    # linking "ner": the question's concepts come from query NER through the same LLM
    with TeragClient(settings, namespace=namespace, retrieval={"linking": "ner"}) as c:
        report = c.index(docs, progress=False)
        assert report.passages_new == 2 and report.extracted_fresh == 2
        assert report.input_tokens > 100 * 2 and report.tokens_unknown == 0
        ledger = c.ledger.totals(stage=Stage.EXTRACTION, run_id=report.run_id)
        assert (ledger.calls, ledger.input_tokens, ledger.output_tokens) == (
            2,
            report.input_tokens,
            report.output_tokens,
        )
        # The namespace records which model extracted it
        info = c.stats()
        assert (info.extractor, info.model) == ("ollama", f"openai:{ollama_settings.llm_model}")
        ans = c.answer(QUESTION, top_k=2)
        assert ans.answer
        answer_totals = c.ledger.totals(stage=Stage.ANSWER)
        assert answer_totals.calls == 1 and answer_totals.uncounted == 0
        assert (ans.input_tokens, ans.output_tokens) == (
            answer_totals.input_tokens,
            answer_totals.output_tokens,
        )
        assert c.ledger.totals(stage=Stage.QUERY_NER).calls == 1


def test_same_model_through_both_protocols_extracts_the_same(
    base_settings: Settings, ollama_settings: Settings
) -> None:
    """Temperature 0: Ollama's own API and its /v1 give the same concepts and token counts."""
    texts = [p.read_text(encoding="utf-8")[:600] for p in sorted(SAMPLE.glob("*.md"))[:2]]
    ps = [Passage(f"p{i}", f"d{i}", 0, f"t{i}", t) for i, t in enumerate(texts)]
    native = OllamaLLM(ollama_settings.with_overrides(llm_temperature=0.0))
    compat = make_llm(openai_settings(base_settings, ollama_settings))
    a = OllamaExtractor(native).extract(ps, "n")
    b = OllamaExtractor(compat).extract(ps, "o")
    assert [set(x.concepts) for x in a] == [set(x.concepts) for x in b]
    assert [(x.input_tokens, x.output_tokens) for x in a] == [
        (x.input_tokens, x.output_tokens) for x in b
    ]
