"""`terag serve` with TERAG_LLM_MODEL=openai:<model>: every streamed surface of `ask` through a
real OpenAI-compatible server (the session's Ollama at `/v1`): the HTTP NDJSON stream with the
server's token counts, `TeragRemote.answer_stream`, and the MCP `ask` tool's progress."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.retrieval.answer import parse_answer
from terag_neo4j.service.remote_client import (
    StreamedAnswer,
    StreamedPassages,
    StreamedText,
    TeragRemote,
)
from tests.service.conftest import KEY_A_READ, Service, running_service, service_env
from tests.service.test_mcp import http_session, text_of

pytestmark = [pytest.mark.integration, pytest.mark.ollama]
pytest.importorskip("openai")

QUESTION = "Who designed the Volkswagen Beetle?"


@pytest.fixture(scope="module")
def openai_service(
    base_settings: Settings,
    tenants: tuple[str, str],
    ollama_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Service]:
    env = service_env(base_settings, *tenants)
    env.update(
        TERAG_LLM_MODEL=f"openai:{ollama_settings.llm_model}",
        TERAG_LLM_URL=ollama_settings.ollama_host.rstrip("/") + "/v1",
        TERAG_LLM_API_KEY="sk-unused-by-ollama",
        OLLAMA_HOST="http://127.0.0.1:9",  # nothing answers there: every call goes to /v1
    )
    log = tmp_path_factory.mktemp("serve-openai") / "serve.log"
    with running_service(env, base_settings, tenants, log) as svc:
        yield svc
    assert "sk-unused-by-ollama" not in log.read_text(encoding="utf-8")


def the_answer_of(streamed: str) -> str:
    return parse_answer(json.dumps({"answer": streamed}))


def test_http_ask_stream_through_openai(openai_service: Service) -> None:
    body = {"question": QUESTION, "top_k": 3, "stream": True}
    with (
        openai_service.client(KEY_A_READ) as http,
        http.stream("POST", f"/v1/namespaces/{openai_service.ns_a}/ask", json=body) as r,
    ):
        assert r.status_code == 200
        lines = [json.loads(x) for x in r.iter_lines() if x.strip()]
    events = [x["event"] for x in lines]
    assert events[0] == "passages" and events[-1] == "done", lines[-1]
    assert "token" in events
    done = lines[-1]
    streamed = "".join(x["text"] for x in lines if x["event"] == "token")
    assert done["answer"] and done["answer"] == the_answer_of(streamed)
    # the server's usage of the stream's last chunk
    assert done["input_tokens"] > 50 and done["output_tokens"] > 0
    with openai_service.client(KEY_A_READ) as http:
        plain = http.post(
            f"/v1/namespaces/{openai_service.ns_a}/ask", json={"question": QUESTION, "top_k": 3}
        )
    assert plain.status_code == 200, plain.text
    # the same prompt at temperature 0: the same counts
    assert plain.json()["input_tokens"] == done["input_tokens"]


def test_remote_answer_stream_through_openai(openai_service: Service) -> None:
    with TeragRemote(openai_service.url, api_key=KEY_A_READ, namespace=openai_service.ns_a) as t:
        events = list(t.answer_stream(QUESTION, top_k=2))
    assert isinstance(events[0], StreamedPassages) and isinstance(events[-1], StreamedAnswer)
    texts = [e.text for e in events if isinstance(e, StreamedText)]
    ans = events[-1].answer
    assert ans.answer and ans.answer == the_answer_of("".join(texts))
    assert ans.input_tokens is not None and ans.input_tokens > 50


@pytest.mark.asyncio
async def test_mcp_ask_progress_through_openai(openai_service: Service) -> None:
    notes: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notes.append(message or "")

    args = {"namespace": openai_service.ns_a, "question": QUESTION, "top_k": 3}
    async with http_session(openai_service, KEY_A_READ) as s:
        res = await s.call_tool("ask", args, progress_callback=on_progress)
    assert not res.is_error, text_of(res)
    out = res.structured_content
    assert out is not None and out["answer"] and out["input_tokens"] > 50
    assert notes[0] == "passages: " + ", ".join(out["passage_ids"]) and len(notes) >= 2
    assert out["answer"] == the_answer_of(notes[-1])
