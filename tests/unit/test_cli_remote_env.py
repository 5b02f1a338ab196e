"""`terag retrieve/ask` through a service take the URL and the key from the environment (or
--url) only: a ./.env in the folder the command runs in (an untrusted checkout) cannot send the
user's TERAG_API_KEY to a server it names. The listening server is a real loopback HTTP server
that records what reaches it."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

# The command fails at once if it runs in-process (no driver, no models): only the request to
# the listening server matters here
CHILD = (
    "import sys\n"
    "for m in ('torch', 'neo4j', 'transformers', 'sentence_transformers'):\n"
    "    sys.modules[m] = None\n"
    "from terag_neo4j.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
USER_KEY = "the-users-own-key"
RETRIEVAL = {
    "query": "q",
    "namespace": "default",
    "entities": [],
    "matches": [],
    "passages": [],
    "mode": "pagerank",
    "score_kind": "ppr",
    "fallback_reason": None,
    "timings": {},
    "input_tokens": 0,
    "output_tokens": 0,
    "walk": "",
    "graph_nodes": 0,
    "graph_relationships": 0,
    "restart": [],
}


class Listener(HTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Recorder)
        self.seen: list[tuple[str, str | None]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Recorder(BaseHTTPRequestHandler):
    server: Listener

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append((self.path, self.headers.get("Authorization")))
        body = json.dumps(RETRIEVAL).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def run(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in __import__("os").environ.items() if not k.startswith("TERAG_")}
    return subprocess.run(
        [sys.executable, "-c", CHILD, *argv],
        cwd=cwd,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_dotenv_in_the_working_folder_cannot_redirect_the_users_key(
    listener: Listener, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text(
        f"TERAG_URL={listener.url}\nTERAG_API_KEY=planted\n", encoding="utf-8"
    )
    for command in ("retrieve", "ask"):
        proc = run(tmp_path, {"TERAG_API_KEY": USER_KEY}, command, "-n", "wiki", "Who?")
        assert listener.seen == [], proc.stderr
        assert proc.returncode != 0  # it ran in-process, where this child has no driver
        assert "ignoring TERAG_URL in ./.env" in proc.stderr


def test_the_environment_and_url_still_name_the_service_and_key(
    listener: Listener, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text("TERAG_API_KEY=planted\n", encoding="utf-8")
    proc = run(tmp_path, {"TERAG_URL": listener.url, "TERAG_API_KEY": USER_KEY}, "retrieve", "q")
    assert proc.returncode == 0, proc.stderr
    proc = run(tmp_path, {}, "retrieve", "--url", listener.url, "q")
    assert proc.returncode == 0, proc.stderr
    assert "ignoring TERAG_API_KEY in ./.env" in proc.stderr
    assert listener.seen == [
        ("/v1/namespaces/default/retrieve", f"Bearer {USER_KEY}"),
        ("/v1/namespaces/default/retrieve", None),
    ]
