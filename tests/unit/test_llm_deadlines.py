"""Error handling of the LLM layer's deadlines, on fake HTTP transports (no server): a streamed
reply that never ends fails within TERAG_LLM_TIMEOUT_S and hangs up; retries of a server that
keeps failing stop once that timeout has passed, whatever `llm_retries` allows."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.llm import LLMUnavailableError, OllamaLLM, Stage


class Endless(httpx.SyncByteStream):
    """A chat reply that streams a piece every 10 ms for ever."""

    def __init__(self) -> None:
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        while not self.closed:
            chunk = {"model": "m", "message": {"role": "assistant", "content": "x"}, "done": False}
            yield (json.dumps(chunk) + "\n").encode()
            time.sleep(0.01)

    def close(self) -> None:
        self.closed = True


def settings(**update: object) -> Settings:
    return Settings().model_copy(update={"ollama_host": "http://127.0.0.1:9", **update})


def test_a_streamed_reply_that_never_ends_fails_within_the_timeout() -> None:
    body = Endless()
    transport = httpx.MockTransport(lambda request: httpx.Response(200, stream=body))
    llm = OllamaLLM(settings(llm_timeout_s=0.5), transport=transport)
    t = time.monotonic()
    with pytest.raises(LLMUnavailableError, match="TERAG_LLM_TIMEOUT_S") as e:
        for _ in llm.stream("q", stage=Stage.ANSWER):
            pass
    assert time.monotonic() - t < 3
    assert "\n" not in str(e.value)
    assert body.closed, "the reply was left open"


def test_a_streamed_reply_abandoned_by_its_reader_is_closed() -> None:
    body = Endless()
    transport = httpx.MockTransport(lambda request: httpx.Response(200, stream=body))
    llm = OllamaLLM(settings(llm_timeout_s=60), transport=transport)
    gen = llm.stream("q", stage=Stage.ANSWER)
    assert next(gen) == "x"
    gen.close()  # what the service's reader does when its client went away
    assert body.closed


def test_retries_stop_once_the_timeout_has_passed() -> None:
    calls: list[float] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        calls.append(time.monotonic())
        time.sleep(0.3)  # a server that answers slowly, and badly
        return httpx.Response(503, json={"error": "busy"})

    llm = OllamaLLM(
        settings(llm_timeout_s=1.0, llm_retries=50, llm_retry_backoff_s=0.05),
        transport=httpx.MockTransport(refuse),
    )
    t = time.monotonic()
    with pytest.raises(LLMUnavailableError):
        llm.complete("q", stage=Stage.ANSWER)
    # 51 attempts were allowed; the timeout leaves room for a few
    assert 2 <= len(calls) <= 5 and time.monotonic() - t < 3, (len(calls), time.monotonic() - t)
