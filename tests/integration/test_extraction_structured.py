"""The structured extraction prompt (`json`) against the real Ollama, through its own API
(`format`) and through its OpenAI-compatible /v1 (`response_format`): the request carries the
schema, the constrained reply is whole JSON, the concepts come out of it, and both protocols give
the same concepts and token counts at temperature 0. The transports are the real ones, wrapped
only to keep a copy of each request body."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Passage
from terag_neo4j.indexing.extraction.json_reply import PASSAGE_SCHEMA, is_whole_json
from terag_neo4j.indexing.extraction.ollama_extractor import OllamaExtractor
from terag_neo4j.llm import OllamaLLM, Stage, TokenLedger

from .conftest import SAMPLE

pytestmark = [pytest.mark.integration, pytest.mark.ollama]

openai = pytest.importorskip("openai")


class RecordingTransport(httpx.HTTPTransport):
    """The real HTTP transport, keeping each chat request's body."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith(("/api/chat", "/chat/completions")):
            self.sent.append(json.loads(request.content))
        return super().handle_request(request)


def _passages() -> list[Passage]:
    texts = [p.read_text(encoding="utf-8")[:600] for p in sorted(SAMPLE.glob("*.md"))[:2]]
    return [Passage(f"p{i}", f"d{i}", 0, f"t{i}", t) for i, t in enumerate(texts)]


def test_json_extraction_asks_both_protocols_for_the_schema(ollama_settings: Settings) -> None:
    from terag_neo4j.llm.openai_chat import OpenAILLM

    settings = ollama_settings.with_overrides(llm_temperature=0.0)
    ps = _passages()
    native_sent = RecordingTransport()
    native = OllamaLLM(settings, TokenLedger(), transport=native_sent)
    compat_sent = RecordingTransport()
    compat_settings = settings.with_overrides(
        llm_model=f"openai:{settings.llm_name}",
        llm_url=settings.ollama_host.rstrip("/") + "/v1",
    )
    client = openai.OpenAI(
        base_url=compat_settings.llm_url,
        api_key="no-key",
        max_retries=0,
        http_client=httpx.Client(transport=compat_sent, timeout=settings.llm_timeout_s),
    )
    compat = OpenAILLM(compat_settings, TokenLedger(), client=client)
    try:
        a = OllamaExtractor(native, prompt="json").extract(ps, "n")
        b = OllamaExtractor(compat, prompt="json").extract(ps, "o")
    finally:
        native.close()
        compat.close()
    assert [body["format"] for body in native_sent.sent] == [PASSAGE_SCHEMA] * 2
    assert [body["response_format"]["json_schema"]["schema"] for body in compat_sent.sent] == [
        PASSAGE_SCHEMA
    ] * 2
    assert any(x.concepts for x in a)
    # replies that were not JSON would each carry a warning
    assert not [w for x in a + b for w in x.warnings if "not JSON" in w]
    assert [set(x.concepts) for x in a] == [set(x.concepts) for x in b]
    assert [(x.input_tokens, x.output_tokens) for x in a] == [
        (x.input_tokens, x.output_tokens) for x in b
    ]
    totals = native.ledger.totals(Stage.EXTRACTION, "n")
    assert totals.calls == 2 and totals.uncounted == 0


def test_a_constrained_reply_is_whole_json(ollama_llm: OllamaLLM) -> None:
    comp = ollama_llm.complete(
        "Name the city in: Marie Curie was born in Warsaw. Answer in JSON.",
        stage=Stage.EXTRACTION,
        format=PASSAGE_SCHEMA,
        max_tokens=96,
    )
    assert comp.cut or is_whole_json(comp.text)
    assert comp.text.lstrip().startswith("{")
