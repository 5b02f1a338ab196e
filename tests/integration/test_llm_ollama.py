"""Integration tests of the LLM layer against a real Ollama server with SmolLM2-135M."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.llm import (
    LLMUnavailableError,
    Message,
    ModelNotFoundError,
    OllamaLLM,
    Stage,
    TokenLedger,
)
from terag_neo4j.local import ollama as srv

pytestmark = [pytest.mark.integration, pytest.mark.ollama]


def test_completion_has_text_and_token_counts(ollama_llm: OllamaLLM) -> None:
    completion = ollama_llm.complete(
        [Message("user", "What is the capital of France? Answer in one word.")],
        stage=Stage.ANSWER,
        max_tokens=16,
    )
    assert completion.text.strip()
    assert completion.input_tokens > 10  # the ChatML system + user turns
    assert 0 < completion.output_tokens <= 16
    assert completion.done_reason in {"stop", "length"}
    assert completion.model.startswith(ollama_llm.model)
    assert "<|im_end|>" not in completion.text  # the stop tokens are in force


def test_runner_uses_the_repacked_cpu_kernels(
    ollama_llm: OllamaLLM, ollama_settings: Settings
) -> None:
    """The build sets GGML_USE_CPU_REPACK; ggml's runner lists REPACK among its CPU features."""
    ollama_llm.complete([Message("user", "Say hi.")], stage=Stage.ANSWER, max_tokens=4)
    port = urlsplit(ollama_settings.ollama_host).port
    log_path = srv.serve_log(ollama_settings, port)
    if not log_path.is_file():
        pytest.skip("the Ollama server was not started from this home (no serve log to read)")
    system = [line for line in log_path.read_text().splitlines() if "msg=system" in line]
    assert system, "the runner logged no CPU feature line"
    assert "REPACK=1" in system[-1]


class RecordingTransport(httpx.HTTPTransport):
    """The real HTTP transport, keeping a copy of every /api/chat response body the server sent."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.url.path == "/api/chat":
            response.read()
            with self._lock:
                self.bodies.append(json.loads(response.content))
        return response


def test_ledger_equals_server_reported_counts(ollama_settings: Settings) -> None:
    prompts = ["Name three colours.", "List two animals that live in the sea.", "Count to five."]
    transport = RecordingTransport()
    llm = OllamaLLM(ollama_settings, TokenLedger(), transport=transport)
    completions = llm.map(
        prompts, stage=Stage.EXTRACTION, run_id="it", items_per_prompt=2, max_tokens=24
    )

    assert len(transport.bodies) == 3
    server_in = sum(body["prompt_eval_count"] for body in transport.bodies)
    server_out = sum(body["eval_count"] for body in transport.bodies)
    totals = llm.ledger.totals(Stage.EXTRACTION, "it")
    assert (totals.calls, totals.items) == (3, 6)
    assert totals.input_tokens == sum(c.input_tokens for c in completions) == server_in > 0
    assert totals.output_tokens == sum(c.output_tokens for c in completions) == server_out > 0
    llm.close()


def test_cached_prompt_reports_its_full_length(ollama_llm: OllamaLLM) -> None:
    """Ollama reuses the KV cache for a repeated prompt; the count stays the whole prompt."""
    prompt = [Message("user", "Describe a graph database in one sentence.")]
    first = ollama_llm.complete(prompt, stage=Stage.ANSWER, max_tokens=8)
    second = ollama_llm.complete(prompt, stage=Stage.ANSWER, max_tokens=8)
    assert first.input_tokens > 10
    assert second.input_tokens == first.input_tokens


def test_acomplete_on_the_real_server(ollama_llm: OllamaLLM) -> None:
    completion = asyncio.run(
        ollama_llm.acomplete("Say hello.", stage=Stage.QUERY_NER, max_tokens=8)
    )
    assert completion.output_tokens > 0
    assert ollama_llm.ledger.totals(Stage.QUERY_NER).output_tokens == completion.output_tokens


class ShowTransport(httpx.HTTPTransport):
    """The real HTTP transport, keeping (request body, status) of every /api/show call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[dict[str, Any], int]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.url.path == "/api/show":
            self.calls.append((json.loads(request.content), response.status_code))
        return response


def test_check_model_passes_for_the_configured_model(ollama_settings: Settings) -> None:
    """check_model asks the server about the configured model (once: it has it) and returns;
    the same check on a model the server lacks raises ModelNotFoundError."""
    transport = ShowTransport()
    llm = OllamaLLM(ollama_settings, transport=transport)
    try:
        assert llm.check_model() is None
        assert transport.calls == [({"model": ollama_settings.llm_model}, 200)]
    finally:
        llm.close()
    missing = ollama_settings.model_copy(update={"llm_model": "no-such-model-terag:latest"})
    transport = ShowTransport()
    llm = OllamaLLM(missing, transport=transport)
    try:
        with pytest.raises(ModelNotFoundError, match="no-such-model-terag"):
            llm.check_model()
        assert transport.calls == [({"model": "no-such-model-terag:latest"}, 404)]
    finally:
        llm.close()


def test_unknown_model_raises_model_not_found(ollama_settings: Settings) -> None:
    settings = ollama_settings.model_copy(update={"llm_model": "no-such-model-terag:latest"})
    llm = OllamaLLM(settings)
    started = time.monotonic()
    with pytest.raises(ModelNotFoundError, match="no-such-model-terag") as info:
        llm.complete("hi", stage=Stage.ANSWER)
    assert time.monotonic() - started < 5  # not retried
    assert "ollama pull no-such-model-terag" in str(info.value)
    with pytest.raises(ModelNotFoundError):
        llm.check_model()
    assert llm.ledger.totals().calls == 0


def test_unreachable_server_fails_fast_after_bounded_retries() -> None:
    port = srv.free_port()  # bound then closed: nothing listens there
    settings = Settings().model_copy(
        update={
            "ollama_host": f"http://127.0.0.1:{port}",
            "llm_retries": 2,
            "llm_retry_backoff_s": 0.05,
        }
    )
    llm = OllamaLLM(settings)
    started = time.monotonic()
    with pytest.raises(LLMUnavailableError, match=f"127\\.0\\.0\\.1:{port}") as info:
        llm.complete("hi", stage=Stage.ANSWER)
    elapsed = time.monotonic() - started
    assert "3 attempts" in str(info.value)
    assert elapsed < 5


class CountingTransports:
    """The real sync and async HTTP transports, counting the chat requests outstanding."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = self.done = 0
        counter = self

        class Sync(httpx.HTTPTransport):
            def handle_request(self, request: httpx.Request) -> httpx.Response:
                counter.enter()
                try:
                    response = super().handle_request(request)
                    response.read()
                    return response
                finally:
                    counter.leave()

        class Async(httpx.AsyncHTTPTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                counter.enter()
                try:
                    response = await super().handle_async_request(request)
                    await response.aread()
                    return response
                finally:
                    counter.leave()

        self.sync, self.async_ = Sync(), Async()

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1
            self.done += 1


def test_llm_concurrency_bounds_threads_event_loops_and_backend_objects_together(
    ollama_settings: Settings,
) -> None:
    """Two OllamaLLM objects, map's workers, another thread and an event loop: at most
    TERAG_LLM_CONCURRENCY requests reach the server at once (each object's own semaphore, and
    one per loop, let four through before)."""
    settings = ollama_settings.model_copy(update={"llm_concurrency": 2})
    counting = CountingTransports()
    a = OllamaLLM(settings, transport=counting.sync, async_transport=counting.async_)
    b = OllamaLLM(settings, transport=counting.sync, async_transport=counting.async_)

    async def in_a_loop() -> None:
        await asyncio.gather(
            *(b.acomplete("Say hi.", stage=Stage.ANSWER, max_tokens=2) for _ in range(2))
        )

    loop_thread = threading.Thread(target=asyncio.run, args=(in_a_loop(),))
    other = threading.Thread(
        target=b.complete, args=("Say hi.",), kwargs={"stage": Stage.ANSWER, "max_tokens": 2}
    )
    try:
        loop_thread.start()
        other.start()
        a.map(["Say hi."] * 3, stage=Stage.ANSWER, max_tokens=2)
        loop_thread.join(timeout=600)
        other.join(timeout=600)
    finally:
        a.close()
        b.close()
    assert counting.done == 6
    assert counting.most == 2
