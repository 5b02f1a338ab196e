"""`terag ask --url` prints the answer as the service streams it: a real loopback HTTP server sends
the stream's lines (no Neo4j, no reader); the text ends as the whole answer's text, and an
error, however the stream ends, is one line of its own with the CLI's exit code."""

from __future__ import annotations

import argparse
import io
import itertools
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from terag_neo4j.cli import remote_commands
from tests.unit.test_cli_remote_env import RETRIEVAL

PASSAGE = {
    "id": "p1",
    "doc_id": "beetle",
    "title": "Beetle",
    "text": "Ferdinand Porsche designed the Beetle.",
    "score": 0.5,
    "provenance": {"source": "beetle.md"},
}
DONE = {
    "event": "done",
    "answer": "Ferdinand Porsche designed it. [1]",
    "citations": [],
    "uncited": [],
    "streamed": "answer_value",
    "input_tokens": 120,
    "output_tokens": 9,
    "retrieval": {**RETRIEVAL, "passages": [PASSAGE]},
}
PIECES = ["Ferdinand ", "\n Porsche", " designed", " it.  ", " [1]"]


def lines(*events: dict[str, Any]) -> list[bytes]:
    return [(json.dumps(e) + "\n").encode() for e in events]


STREAMED = lines(
    {"event": "passages", "passages": [PASSAGE]},
    *({"event": "token", "text": p} for p in PIECES),
    {"event": "answer", "answer": DONE["answer"], "citations": [], "uncited": []},
    DONE,
)


class Streamer(HTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.status = 200
        self.lines: list[bytes] = []
        self.bodies: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: Streamer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.bodies.append(json.loads(body))
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()  # no length: the lines run until the connection closes
        for line in self.server.lines:
            self.wfile.write(line)
            self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def streamer() -> Iterator[Streamer]:
    server = Streamer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


class Terminal(io.StringIO):
    """stdout that keeps what each flush showed."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []

    def flush(self) -> None:
        self.shown.append(self.getvalue())


def ask(
    streamer: Streamer, monkeypatch: pytest.MonkeyPatch, json_out: bool = False
) -> tuple[int, Terminal]:
    out = Terminal()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.delenv("TERAG_API_KEY", raising=False)
    args = argparse.Namespace(
        command="ask", question="Who designed the Beetle?", namespace="wiki", top_k=3, json=json_out
    )
    return remote_commands.run(args, streamer.url), out


def test_the_text_grows_as_the_pieces_arrive_and_ends_as_the_answers_text(
    streamer: Streamer, monkeypatch: pytest.MonkeyPatch
) -> None:
    streamer.lines = STREAMED
    code, out = ask(streamer, monkeypatch)
    assert code == 0
    assert streamer.bodies == [{"question": "Who designed the Beetle?", "top_k": 3, "stream": True}]
    assert out.getvalue() == remote_commands.answer_text(DONE) + "\n"
    # "answer: " once the passages are in, then each piece, whitespace collapsed as the answer
    # has it: what was shown is never taken back
    shown = [s for i, s in enumerate(out.shown) if s and (i == 0 or s != out.shown[i - 1])]
    assert shown[:3] == ["answer: ", "answer: Ferdinand", "answer: Ferdinand Porsche"]
    assert all(b.startswith(a) for a, b in itertools.pairwise(shown))
    assert "answer: Ferdinand Porsche designed it. [1]" in shown


def test_json_waits_for_the_whole_answer(
    streamer: Streamer, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = {k: v for k, v in DONE.items() if k not in ("event", "streamed")}
    body = json.dumps(whole).encode()
    streamer.lines = [body]
    code, out = ask(streamer, monkeypatch, json_out=True)
    assert code == 0 and "stream" not in streamer.bodies[0]
    printed = json.loads(out.getvalue())
    keys = ["answer", "retrieval", "input_tokens", "output_tokens", "citations", "uncited"]
    assert list(printed) == keys and printed["answer"] == DONE["answer"]


@pytest.mark.parametrize(
    ("tail", "code", "message"),
    [
        (
            lines({"event": "error", "status": 504, "error": {"type": "T", "message": "slow"}}),
            1,
            "terag: error: slow\n",
        ),
        ([], 3, "ended the answer's stream before its last line; ask again\n"),
        ([b"<html>proxy</html>\n"], 1, "the service sent a line that is not JSON"),
    ],
)
def test_a_stream_that_fails_midway_ends_its_line_then_says_why_once(
    streamer: Streamer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tail: list[bytes],
    code: int,
    message: str,
) -> None:
    streamer.lines = STREAMED[:3] + tail
    got, out = ask(streamer, monkeypatch)
    assert got == code
    assert out.getvalue() == "answer: Ferdinand Porsche\n"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("terag: error: ") and message in err


def test_a_refusal_before_the_stream_keeps_its_exit_code(
    streamer: Streamer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    streamer.status = 404
    streamer.lines = [json.dumps({"error": {"type": "NotFound", "message": "no wiki"}}).encode()]
    got, out = ask(streamer, monkeypatch)
    assert got == 4 and out.getvalue() == ""
    assert capsys.readouterr().err == "terag: error: no wiki\n"
