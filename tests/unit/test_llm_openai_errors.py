"""Error handling and usage accounting of the `openai:` LLM backend, against a local stand-in
HTTP server (a stand-in, not the project's code faked): it answers /v1/chat/completions and
/v1/models with scripted replies, so each failure a real server sends (429 with Retry-After,
500, 401, 404, a reply cut at the length limit, a reply without a usage block, a refused
`response_format`) is met exactly once, with the requests it caused recorded."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.indexing.extraction.ollama_extractor import OllamaExtractor
from terag_neo4j.llm import LLMError, LLMUnavailableError, ModelNotFoundError, Stage, make_llm
from terag_neo4j.llm.openai_chat import OpenAILLM

pytest.importorskip("openai")

KEY = "sk-standin-secret-key-0123456789"


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    stream: list[Any] | None = None  # SSE chunks


@dataclass
class StandIn:
    url: str
    replies: list[Reply]
    models: list[str] | None = field(default_factory=lambda: ["small-model", "big-model"])
    requests: list[dict[str, Any]] = field(default_factory=list)
    delay_s: float = 0.0  # how long each reply takes
    in_flight: int = 0
    most_in_flight: int = 0


def completion(
    text: str, finish: str = "stop", usage: dict[str, int] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "small-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish,
            }
        ],
    }
    if usage is not None:
        body["usage"] = {**usage, "total_tokens": sum(usage.values())}
    return body


def chunk(text: str | None, finish: str | None = None, usage: Any = None) -> dict[str, Any]:
    choices = (
        [] if text is None else [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]
    )
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "small-model",
        "choices": choices,
        "usage": usage,
    }


@pytest.fixture()
def standin() -> Iterator[StandIn]:
    state = StandIn("", [])
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, reply: Reply) -> None:
            if reply.stream is not None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for c in reply.stream:
                    self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                return
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/v1/models" and state.models is not None:
                data = [
                    {"id": m, "object": "model", "created": 0, "owned_by": "x"}
                    for m in state.models
                ]
                self._send(Reply(body={"object": "list", "data": data}))
            else:
                self._send(Reply(404, {"error": {"message": "not found"}}))

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                state.requests.append({"path": self.path, "at": time.monotonic(), **body})
                reply = state.replies.pop(0) if state.replies else Reply(500, {"error": {}})
                state.in_flight += 1
                state.most_in_flight = max(state.most_in_flight, state.in_flight)
            time.sleep(state.delay_s)
            try:
                self._send(reply)
            finally:
                with lock:
                    state.in_flight -= 1

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def llm_for(standin: StandIn, **update: Any) -> OpenAILLM:
    settings = Settings(
        llm_model="openai:small-model",
        llm_url=standin.url,
        llm_api_key=KEY,
        llm_retry_backoff_s=0.0,
        **update,
    )
    llm = make_llm(settings)
    assert isinstance(llm, OpenAILLM)
    return llm


def test_429_waits_what_retry_after_asks_then_counts_the_servers_usage(standin: StandIn) -> None:
    standin.replies = [
        Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"}),
        Reply(body=completion("fine", usage={"prompt_tokens": 11, "completion_tokens": 3})),
    ]
    llm = llm_for(standin)
    comp = llm.complete("hi", stage=Stage.ANSWER)
    assert len(standin.requests) == 2
    waited = standin.requests[1]["at"] - standin.requests[0]["at"]
    assert waited >= 0.9, f"Retry-After: 1 was not honoured (retried after {waited:.2f}s)"
    assert (comp.text, comp.input_tokens, comp.output_tokens) == ("fine", 11, 3)
    totals = llm.ledger.totals()
    assert (totals.calls, totals.input_tokens, totals.output_tokens, totals.uncounted) == (
        1,
        11,
        3,
        0,
    )


def test_500_then_success_is_retried(standin: StandIn) -> None:
    standin.replies = [
        Reply(500, {"error": {"message": "boom"}}),
        Reply(body=completion("ok", usage={"prompt_tokens": 5, "completion_tokens": 1})),
    ]
    comp = llm_for(standin).complete("hi", stage=Stage.ANSWER)
    assert comp.text == "ok" and len(standin.requests) == 2


def test_5xx_every_time_stops_within_the_timeout(standin: StandIn) -> None:
    standin.replies = [Reply(503, {"error": {"message": "busy"}}) for _ in range(20)]
    started = time.monotonic()
    with pytest.raises(LLMUnavailableError, match="TERAG_LLM_TIMEOUT_S"):
        llm_for(standin, llm_retries=10, llm_timeout_s=1.0).complete("hi", stage=Stage.ANSWER)
    assert time.monotonic() - started < 5


def test_401_is_not_retried_and_names_the_key_setting_without_the_key(standin: StandIn) -> None:
    standin.replies = [
        Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY[:3]}***{KEY[-4:]}"}})
    ]
    with pytest.raises(LLMError) as err:
        llm_for(standin).complete("hi", stage=Stage.ANSWER)
    message = str(err.value)
    assert len(standin.requests) == 1
    assert "TERAG_LLM_API_KEY" in message and "\n" not in message
    assert KEY not in message and KEY[-4:] not in message


def test_unknown_model_lists_the_servers_models(standin: StandIn) -> None:
    standin.replies = [Reply(404, {"error": {"message": 'model "small-model" not found'}})]
    with pytest.raises(ModelNotFoundError) as err:
        llm_for(standin).complete("hi", stage=Stage.ANSWER)
    message = str(err.value)
    assert "TERAG_LLM_MODEL" in message and "big-model" in message and "\n" not in message
    assert len(standin.requests) == 1


def test_a_url_that_is_no_openai_server_names_the_url_setting(standin: StandIn) -> None:
    standin.models = None  # /v1/models answers 404 too
    standin.replies = [Reply(404, {"error": {"message": "no such route"}})]
    with pytest.raises(LLMError, match="TERAG_LLM_URL"):
        llm_for(standin).complete("hi", stage=Stage.ANSWER)


def test_400_is_not_retried(standin: StandIn) -> None:
    standin.replies = [Reply(400, {"error": {"message": "context too long"}})]
    with pytest.raises(LLMError, match="TERAG_LLM_MODEL") as err:
        llm_for(standin).complete("hi", stage=Stage.ANSWER)
    assert "context too long" in str(err.value) and len(standin.requests) == 1


def test_a_reply_without_usage_is_recorded_as_unknown_not_zero(standin: StandIn) -> None:
    standin.replies = [Reply(body=completion("ok", usage=None))]
    llm = llm_for(standin)
    comp = llm.complete("hi", stage=Stage.ANSWER)
    assert comp.input_tokens is None and comp.output_tokens is None
    totals = llm.ledger.totals()
    assert (totals.calls, totals.uncounted, totals.input_tokens) == (1, 1, 0)
    assert "token counts unknown for 1 call" in llm.ledger.summary()


def test_a_cut_reply_is_reported_cut_and_its_last_line_dropped(standin: StandIn) -> None:
    usage = {"prompt_tokens": 9, "completion_tokens": 4}
    standin.replies = [Reply(body=completion("Person: Ada Lovelace\nPlace: Lond", "length", usage))]
    llm = llm_for(standin)
    concepts, tin, tout = OllamaExtractor(llm, grounded=False).extract_query("q", "r")
    assert [c.name for c in concepts] == ["Ada Lovelace"]  # not "Lond", half-written
    assert (tin, tout) == (9, 4)


def test_a_streamed_reply_asks_for_and_reads_the_usage_of_its_last_chunk(standin: StandIn) -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    standin.replies = [Reply(stream=[chunk("Par"), chunk("is", "stop"), chunk(None, usage=usage)])]
    llm = llm_for(standin)
    gen = llm.stream("hi", stage=Stage.ANSWER)
    pieces = []
    while True:
        try:
            pieces.append(next(gen))
        except StopIteration as stop:
            comp = stop.value
            break
    assert pieces == ["Par", "is"] and comp.text == "Paris"
    assert (comp.input_tokens, comp.output_tokens) == (7, 2)
    assert standin.requests[0]["stream_options"] == {"include_usage": True}


def test_a_refused_response_format_is_asked_again_without_it(standin: StandIn) -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 1}
    standin.replies = [
        Reply(400, {"error": {"message": "response_format not supported"}}),
        Reply(body=completion('{"answer": "x"}', usage=usage)),
    ]
    comp = llm_for(standin).complete("hi", stage=Stage.ANSWER, format="json")
    assert comp.text == '{"answer": "x"}'
    assert standin.requests[0]["response_format"] == {"type": "json_object"}
    assert "response_format" not in standin.requests[1]


def test_a_400_not_about_the_format_is_not_asked_again(standin: StandIn) -> None:
    standin.replies = [Reply(400, {"error": {"message": "prompt is too long"}})]
    llm = llm_for(standin)
    with pytest.raises(LLMError, match="HTTP 400"):
        llm.complete("hi", stage=Stage.ANSWER, format="json")
    assert len(standin.requests) == 1
    # structured replies are still asked for: the server never refused them
    usage = {"prompt_tokens": 3, "completion_tokens": 1}
    standin.replies = [Reply(body=completion("{}", usage=usage))]
    llm.complete("hi", stage=Stage.ANSWER, format="json")
    assert standin.requests[1]["response_format"] == {"type": "json_object"}


def test_a_refused_format_is_not_asked_for_again(standin: StandIn) -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 1}
    standin.replies = [
        Reply(400, {"error": {"message": "unsupported parameter: response_format"}}),
        Reply(body=completion("{}", usage=usage)),
        Reply(body=completion("{}", usage=usage)),
    ]
    llm = llm_for(standin)
    llm.complete("hi", stage=Stage.ANSWER, format="json")
    llm.complete("again", stage=Stage.ANSWER, format="json")
    assert len(standin.requests) == 3
    assert ["response_format" in r for r in standin.requests] == [True, False, False]


def test_llm_concurrency_bounds_the_calls_in_flight(standin: StandIn) -> None:
    usage = {"prompt_tokens": 2, "completion_tokens": 1}
    standin.replies = [Reply(body=completion("ok", usage=usage)) for _ in range(6)]
    standin.delay_s = 0.2
    llm = llm_for(standin, llm_concurrency=2)
    # two threads calling while map's two workers call: without the bound, four in flight
    threads = [
        threading.Thread(target=llm.complete, args=("b",), kwargs={"stage": Stage.ANSWER})
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    done = llm.map(["a"] * 4, stage=Stage.EXTRACTION)
    for t in threads:
        t.join()
    assert len(done) == 4 and len(standin.requests) == 6
    assert standin.most_in_flight == 2
