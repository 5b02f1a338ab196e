"""Every streamed ask ends: on a one-worker service flooded with requests, each ask either gets
its refusal's status or a 200 stream whose last line is `done` or `error`, within a bound; a
reader that never finishes its reply ends its stream at the ask's deadline; and a client that
goes away mid-stream gives its worker slot back at once instead of holding it for the rest of
an answer nobody reads.

The broken reader is an HTTP server of the test's that answers Ollama's chat call with a reply
that never ends (a piece every 50 ms): a real Ollama with the reader's 32-token cap always
finishes, so the failure this defends against cannot be made with one."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from terag_neo4j.config import Settings
from tests.service.conftest import KEY_ALL, Service, free_port, running_service, service_env

QUESTION = "Who designed the Volkswagen Beetle?"
LLM_TIMEOUT_S = 6
# A reader told to stop ends at its next piece (50 ms apart); far less than LLM_TIMEOUT_S
STOP_S = 2.5
QUEUE_TIMEOUT_S = 5
NEO4J_TIMEOUT_S = 10
# The ask's own deadline (routes_query.ask_deadline_s) and some room for a loaded machine
DEADLINE_S = QUEUE_TIMEOUT_S + NEO4J_TIMEOUT_S + 2 * LLM_TIMEOUT_S
BOUND_S = DEADLINE_S + 15


class EndlessChat(BaseHTTPRequestHandler):
    """Ollama's /api/chat, streaming a reply that never ends (until the caller hangs up)."""

    protocol_version = "HTTP/1.0"  # the body ends when the connection closes: never, here

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/x-ndjson")
        self.end_headers()
        content = '{"answer": "'
        try:
            while not self.server.closing.is_set():  # type: ignore[attr-defined]
                chunk = {"model": "m", "message": {"role": "assistant", "content": content}}
                self.wfile.write((json.dumps({**chunk, "done": False}) + "\n").encode())
                self.wfile.flush()
                content = "x"
                time.sleep(0.05)
        except OSError:  # the reader hung up
            self.server.hung_up.set()  # type: ignore[attr-defined]

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def endless_ollama() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), EndlessChat)
    server.closing = threading.Event()  # type: ignore[attr-defined]
    server.hung_up = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.closing.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()


def one_worker_env(
    base_settings: Settings, tenants: tuple[str, str], ollama: str
) -> dict[str, str]:
    env = service_env(base_settings, *tenants)
    env.update(
        TERAG_MAX_CONCURRENCY="1",
        TERAG_MAX_QUEUE="0",
        TERAG_QUEUE_TIMEOUT_S=str(QUEUE_TIMEOUT_S),
        TERAG_NEO4J_TIMEOUT_S=str(NEO4J_TIMEOUT_S),
        TERAG_LLM_TIMEOUT_S=str(LLM_TIMEOUT_S),
        OLLAMA_HOST=ollama,
    )
    return env


def streamed_ask(svc: Service) -> tuple[int, list[dict[str, Any]], float]:
    """(status, lines, seconds) of one streamed ask, read to its end."""
    t = time.monotonic()
    body = {"question": QUESTION, "top_k": 3, "stream": True}
    with (
        svc.client(KEY_ALL) as http,
        http.stream("POST", f"/v1/namespaces/{svc.ns_a}/ask", json=body) as r,
    ):
        if r.status_code != 200:
            r.read()
            return r.status_code, [r.json()], time.monotonic() - t
        lines = [json.loads(x) for x in r.iter_lines() if x.strip()]
    return 200, lines, time.monotonic() - t


def retrieve(svc: Service) -> int:
    with svc.client(KEY_ALL) as http:
        r = http.post(f"/v1/namespaces/{svc.ns_a}/retrieve", json={"question": QUESTION})
        return r.status_code


def test_a_flooded_one_worker_service_ends_every_stream(
    base_settings: Settings, tenants: tuple[str, str], tmp_path: Path
) -> None:
    # Nothing listens on the reader's port: an admitted ask's reader fails at once
    env = one_worker_env(base_settings, tenants, f"http://127.0.0.1:{free_port()}")
    with running_service(env, base_settings, tenants, tmp_path / "serve.log") as svc:
        with ThreadPoolExecutor(12) as pool:
            asks = [pool.submit(streamed_ask, svc) for _ in range(4)]
            others = [pool.submit(retrieve, svc) for _ in range(8)]
            results = [f.result(timeout=3 * BOUND_S) for f in asks]
            statuses = [f.result(timeout=3 * BOUND_S) for f in others]
        assert set(statuses) <= {200, 429, 503}, statuses
        assert 429 in statuses + [s for s, _, _ in results], "the flood refused nothing"
        for status, lines, seconds in results:
            assert seconds <= BOUND_S, f"an ask took {seconds:.1f}s"
            if status != 200:
                assert status in (429, 503) and lines[0]["error"]["type"], lines
                continue
            assert lines[0]["event"] == "passages", lines[0]
            assert lines[-1]["event"] in ("done", "error"), f"no end line: {lines[-1]}"
        # One worker, nothing held: the service answers again
        assert retrieve(svc) == 200


def test_a_reader_that_never_finishes_ends_at_the_deadline(
    base_settings: Settings,
    tenants: tuple[str, str],
    tmp_path: Path,
    endless_ollama: ThreadingHTTPServer,
) -> None:
    host = f"http://127.0.0.1:{endless_ollama.server_address[1]}"
    env = one_worker_env(base_settings, tenants, host)
    with running_service(env, base_settings, tenants, tmp_path / "serve.log") as svc:
        status, lines, seconds = streamed_ask(svc)
        assert status == 200
        assert lines[0]["event"] == "passages" and lines[1]["event"] == "token"
        end = lines[-1]
        assert end["event"] == "error" and end["status"] in (502, 503, 504), end
        assert seconds <= BOUND_S, f"the stream ended after {seconds:.1f}s"
        assert "\n" not in end["error"]["message"]
        # The worker slot came back with the stream's end
        assert retrieve(svc) == 200


def test_a_client_gone_mid_stream_gives_its_worker_back(
    base_settings: Settings,
    tenants: tuple[str, str],
    tmp_path: Path,
    endless_ollama: ThreadingHTTPServer,
) -> None:
    host = f"http://127.0.0.1:{endless_ollama.server_address[1]}"
    env = one_worker_env(base_settings, tenants, host)
    endless_ollama.hung_up.clear()  # type: ignore[attr-defined]
    with running_service(env, base_settings, tenants, tmp_path / "serve.log") as svc:
        body = {"question": QUESTION, "top_k": 3, "stream": True}
        with (
            svc.client(KEY_ALL) as http,
            http.stream("POST", f"/v1/namespaces/{svc.ns_a}/ask", json=body) as r,
        ):
            assert r.status_code == 200
            seen = []
            for x in r.iter_lines():
                seen.append(json.loads(x)["event"])
                if seen.count("token") >= 3:
                    break  # and hang up
        gone = time.monotonic()
        # The reader stops at its next piece (every 50 ms) and hangs up on the LLM server; the
        # one worker is free again long before the reader's own timeout or the ask's deadline
        assert endless_ollama.hung_up.wait(STOP_S), "the reader went on for a gone client"  # type: ignore[attr-defined]
        # ... and so the one worker: a retrieval is admitted again (it may itself take a few
        # seconds on a loaded machine, so only the first admission is timed)
        statuses = []
        while time.monotonic() - gone < BOUND_S:
            statuses.append(retrieve(svc))
            if statuses[-1] == 200:
                break
            time.sleep(0.2)
        assert statuses[-1] == 200, statuses
        assert statuses.count(429) <= 3, statuses
