"""Unit tests of the LLM layer: ledger arithmetic, error handling on a fake HTTP transport."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable

import httpx
import ollama
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.llm import (
    LLMCall,
    LLMError,
    LLMUnavailableError,
    Message,
    ModelNotFoundError,
    OllamaLLM,
    Stage,
    TokenLedger,
    is_transient,
)


def call(stage: Stage, run_id: str, inp: int, out: int, items: int = 1) -> LLMCall:
    return LLMCall(stage, run_id, "m", inp, out, 0.1, items)


# ------------------------------------------------------------------ ledger


def test_ledger_totals_by_stage_and_run() -> None:
    ledger = TokenLedger()
    ledger.record(call(Stage.EXTRACTION, "a", 100, 20, items=4))
    ledger.record(call(Stage.EXTRACTION, "a", 50, 10, items=2))
    ledger.record(call(Stage.ANSWER, "a", 30, 5))
    ledger.record(call(Stage.EXTRACTION, "b", 7, 3))

    everything = ledger.totals()
    assert (everything.calls, everything.input_tokens, everything.output_tokens) == (4, 187, 38)
    assert everything.total_tokens == 225

    extraction_a = ledger.totals(Stage.EXTRACTION, "a")
    assert (extraction_a.calls, extraction_a.items) == (2, 6)
    assert extraction_a.input_per_item == pytest.approx(25.0)
    assert extraction_a.output_per_item == pytest.approx(5.0)

    by_stage = ledger.by_stage("a")
    assert set(by_stage) == {Stage.EXTRACTION, Stage.ANSWER}
    assert by_stage[Stage.ANSWER].input_tokens == 30
    assert Stage.QUERY_NER not in by_stage
    assert ledger.totals(Stage.QUERY_NER).items == 0
    assert ledger.totals(Stage.QUERY_NER).input_per_item == 0.0


def test_ledger_summary_lists_stages_and_total() -> None:
    ledger = TokenLedger()
    ledger.record(call(Stage.QUERY_NER, "r", 12, 3))
    ledger.record(call(Stage.ANSWER, "r", 40, 8, items=2))
    text = ledger.summary()
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["stage", "calls", "items"]
    assert any(line.startswith("query_ner") and " 12 " in line for line in lines)
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[1:5] == ["2", "3", "52", "11"]


def test_ledger_is_thread_safe() -> None:
    ledger = TokenLedger()

    def worker() -> None:
        for i in range(2000):
            ledger.record(call(Stage.EXTRACTION, "t", 3, 1))
            if i % 200 == 0:
                ledger.totals()  # reads interleaved with writes must not break

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    totals = ledger.totals()
    assert (totals.calls, totals.input_tokens, totals.output_tokens) == (16000, 48000, 16000)
    assert len(ledger.calls) == 16000


# ------------------------------------------------------------------ classification


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (ollama.ResponseError("busy", 503), True),
        (ollama.ResponseError("boom", 500), True),
        (ollama.ResponseError("slow down", 429), True),
        (ollama.ResponseError('model "x" not found', 404), False),
        (ollama.ResponseError("bad request", 400), False),
        (ConnectionError("refused"), True),
        (ConnectionResetError("reset"), True),
        (httpx.ReadTimeout("timeout"), True),
        (httpx.ConnectTimeout("timeout"), True),
        (httpx.RemoteProtocolError("server disconnected"), True),
        (ValueError("bug"), False),
    ],
)
def test_is_transient(exc: BaseException, transient: bool) -> None:
    assert is_transient(exc) is transient


# ------------------------------------------------------------------ fake transport


def chat_body(content: str, prompt_eval: int | None = 11, evals: int = 5) -> dict[str, object]:
    body: dict[str, object] = {
        "model": "terag-smollm2",
        "created_at": "2026-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": content},
        "done": True,
        "done_reason": "stop",
        "eval_count": evals,
        "eval_duration": 10_000_000,
    }
    if prompt_eval is not None:
        body["prompt_eval_count"] = prompt_eval
        body["prompt_eval_duration"] = 5_000_000
    return body


class FakeOllamaTransport(httpx.BaseTransport):
    """A fake Ollama HTTP endpoint: replies come from `reply(request_number, json_body)`."""

    def __init__(self, reply: Callable[[int, dict[str, object]], httpx.Response]) -> None:
        self.reply = reply
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests += 1
            number = self.requests
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return self.reply(number, json.loads(request.content or b"{}"))
        finally:
            with self._lock:
                self.in_flight -= 1


class FakeAsyncOllamaTransport(httpx.AsyncBaseTransport):
    def __init__(self, sync: FakeOllamaTransport) -> None:
        self.sync = sync

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0)
        return self.sync.handle_request(request)


@pytest.fixture()
def fast_retries() -> Settings:
    return Settings().model_copy(
        update={
            "ollama_host": "http://127.0.0.1:9",
            "llm_retries": 3,
            "llm_concurrency": 2,
            "llm_retry_backoff_s": 0.001,
        }
    )


def test_transient_503_is_retried_then_succeeds(fast_retries: Settings) -> None:
    def reply(n: int, body: dict[str, object]) -> httpx.Response:
        if n <= 2:
            return httpx.Response(503, json={"error": "server busy"})
        return httpx.Response(200, json=chat_body("hi", prompt_eval=21, evals=4))

    fake = FakeOllamaTransport(reply)
    llm = OllamaLLM(fast_retries, transport=fake)
    completion = llm.complete("hello", stage=Stage.ANSWER, run_id="r", items=3)
    assert fake.requests == 3
    assert (completion.text, completion.input_tokens, completion.output_tokens) == ("hi", 21, 4)
    assert completion.done_reason == "stop"
    assert completion.prompt_eval_s == pytest.approx(0.005)
    recorded = llm.ledger.calls
    assert len(recorded) == 1
    assert (recorded[0].stage, recorded[0].run_id, recorded[0].items) == (Stage.ANSWER, "r", 3)


def test_request_carries_model_messages_and_options(fast_retries: Settings) -> None:
    seen: list[dict[str, object]] = []

    def reply(n: int, body: dict[str, object]) -> httpx.Response:
        seen.append(body)
        return httpx.Response(200, json=chat_body("ok"))

    llm = OllamaLLM(fast_retries, transport=FakeOllamaTransport(reply))
    llm.complete(
        [Message("system", "be brief"), Message("user", "q")], stage=Stage.QUERY_NER, max_tokens=7
    )
    body = seen[0]
    assert body["model"] == fast_retries.llm_model
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "q"},
    ]
    assert body["stream"] is False
    assert body["options"] == {
        "temperature": fast_retries.llm_temperature,
        "num_ctx": fast_retries.llm_num_ctx,
        "num_predict": 7,
        "num_thread": 1,
    }


def test_model_not_found_is_not_retried(fast_retries: Settings) -> None:
    fake = FakeOllamaTransport(
        lambda n, body: httpx.Response(404, json={"error": 'model "terag-smollm2" not found'})
    )
    llm = OllamaLLM(fast_retries, transport=fake)
    with pytest.raises(ModelNotFoundError, match="terag-smollm2") as info:
        llm.complete("x", stage=Stage.ANSWER)
    assert fake.requests == 1
    assert "terag ollama start" in str(info.value)
    assert llm.ledger.totals().calls == 0


def test_bad_request_is_not_retried(fast_retries: Settings) -> None:
    fake = FakeOllamaTransport(lambda n, body: httpx.Response(400, json={"error": "bad"}))
    llm = OllamaLLM(fast_retries, transport=fake)
    with pytest.raises(LLMError) as info:
        llm.complete("x", stage=Stage.ANSWER)
    assert not isinstance(info.value, LLMUnavailableError | ModelNotFoundError)
    assert fake.requests == 1


def test_persistent_busy_gives_unavailable_after_bounded_attempts(fast_retries: Settings) -> None:
    fake = FakeOllamaTransport(lambda n, body: httpx.Response(503, json={"error": "busy"}))
    llm = OllamaLLM(fast_retries, transport=fake)
    with pytest.raises(LLMUnavailableError, match=r"127\.0\.0\.1:9"):
        llm.complete("x", stage=Stage.ANSWER)
    assert fake.requests == fast_retries.llm_retries + 1


def test_connect_error_gives_unavailable(fast_retries: Settings) -> None:
    def reply(n: int, body: dict[str, object]) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    fake = FakeOllamaTransport(reply)
    llm = OllamaLLM(fast_retries, transport=fake)
    with pytest.raises(LLMUnavailableError, match="4 attempts"):
        llm.check_model()
    assert fake.requests == 4


def test_missing_prompt_eval_count_records_zero(fast_retries: Settings) -> None:
    fake = FakeOllamaTransport(
        lambda n, body: httpx.Response(200, json=chat_body("x", prompt_eval=None, evals=2))
    )
    llm = OllamaLLM(fast_retries, transport=fake)
    completion = llm.complete("x", stage=Stage.ANSWER)
    assert (completion.input_tokens, completion.output_tokens) == (0, 2)


def test_map_keeps_order_and_respects_concurrency(fast_retries: Settings) -> None:
    def reply(n: int, body: dict[str, object]) -> httpx.Response:
        messages = body["messages"]
        assert isinstance(messages, list)
        prompt = str(messages[-1]["content"])
        time.sleep(0.02 * (int(prompt) % 3))  # finish out of order
        return httpx.Response(200, json=chat_body(prompt, prompt_eval=int(prompt), evals=1))

    fake = FakeOllamaTransport(reply)
    llm = OllamaLLM(fast_retries, transport=fake)
    prompts = [str(i) for i in range(1, 13)]
    results = llm.map(prompts, stage=Stage.EXTRACTION, run_id="m", items_per_prompt=2)
    assert [c.text for c in results] == prompts
    assert fake.max_in_flight == fast_retries.llm_concurrency
    totals = llm.ledger.totals(Stage.EXTRACTION, "m")
    assert (totals.calls, totals.items, totals.input_tokens) == (12, 24, sum(range(1, 13)))


def test_acomplete_uses_the_same_ledger(fast_retries: Settings) -> None:
    def reply(n: int, body: dict[str, object]) -> httpx.Response:
        if n == 1:
            return httpx.Response(502, json={"error": "bad gateway"})
        return httpx.Response(200, json=chat_body("async", prompt_eval=9, evals=3))

    fake = FakeOllamaTransport(reply)
    llm = OllamaLLM(fast_retries, async_transport=FakeAsyncOllamaTransport(fake))

    async def run() -> list[str]:
        done = await asyncio.gather(*(llm.acomplete("q", stage=Stage.ANSWER) for _ in range(3)))
        return [c.text for c in done]

    assert asyncio.run(run()) == ["async"] * 3
    assert fake.requests == 4
    assert llm.ledger.totals().input_tokens == 27
    # A second event loop gets its own client and semaphore.
    assert asyncio.run(run()) == ["async"] * 3
    assert llm.ledger.totals().calls == 6
