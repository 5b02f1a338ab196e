"""Every connection's slot (`connections.guarded_protocol`: at most
TERAG_MAX_CONNECTIONS_PER_CLIENT per address) is given back however the connection ends: a
normal close, a kept-alive connection the client drops, a client reset, a WebSocket upgrade
attempt, the header deadline's 408, a request h11 cannot parse, and the server's shutdown.

A real uvicorn server on a loopback port, with the service's own options (`server_options`), in
a thread of this process so its slot count can be read; the app behind it is a stand-in that
answers 200 to everything (these tests are about the connections, not the routes). Upgrades
held their slots for good when uvicorn ran with a WebSocket protocol: 64 from one address
locked that address out.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn

from terag_neo4j.service import connections
from terag_neo4j.service.app import server_options
from terag_neo4j.service.settings import ServiceSettings

PER_CLIENT = 8


async def _ok(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The stand-in app: 200 "ok" to every request."""
    assert scope["type"] == "http"
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


class Running:
    def __init__(self, server: uvicorn.Server, thread: threading.Thread, port: int) -> None:
        self.server, self.thread, self.port = server, thread, port

    @property
    def held(self) -> int:
        protocol = self.server.config.http
        assert not isinstance(protocol, str)
        return int(protocol.slots_held())  # type: ignore[attr-defined]

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)

    def settled(self, want: int = 0, within: float = 5.0) -> int:
        """The slot count once it reaches `want`, or what it is after `within` seconds."""
        end = time.monotonic() + within
        while self.held != want and time.monotonic() < end:
            time.sleep(0.02)
        return self.held


@contextlib.contextmanager
def running() -> Iterator[Running]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    opts = server_options(ServiceSettings(port=port, max_connections_per_client=PER_CLIENT))
    opts.update(lifespan="off", log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(uvicorn.Config(_ok, **opts))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    end = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < end and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield Running(server, thread, port)
    finally:
        server.should_exit = True
        thread.join(10)


def reply(s: socket.socket) -> bytes:
    data = b""
    with contextlib.suppress(OSError):
        while b"\r\n\r\n" not in data and (chunk := s.recv(4096)):
            data += chunk
    return data


GET = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
    b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
)


def normal_close(r: Running) -> None:
    with r.connect() as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert reply(s).startswith(b"HTTP/1.1 200")


def kept_alive_then_dropped(r: Running) -> None:
    with r.connect() as s:
        s.sendall(GET)
        assert reply(s).startswith(b"HTTP/1.1 200")
        assert r.held == 1  # kept alive: still counted until the client goes


def client_reset(r: Running) -> None:
    s = r.connect()
    s.sendall(b"GET / HTTP/1.1\r\nHost: 127")
    assert r.settled(1) == 1
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # an RST, not a FIN


def upgrade_attempts(r: Running) -> None:
    # Far more than one address may hold at once: each must have been given back
    for _ in range(PER_CLIENT * 3):
        with r.connect() as s:
            s.sendall(UPGRADE)
            got = reply(s)
            assert got.startswith(b"HTTP/1.1 200"), got[:80]  # answered as a plain GET


def header_deadline(r: Running) -> None:
    with r.connect() as s:
        s.sendall(b"GET / HTTP/1.1\r\n")
        assert reply(s).startswith(b"HTTP/1.1 408")


def protocol_error(r: Running) -> None:
    with r.connect() as s:
        s.sendall(b"NOT HTTP AT ALL\x00\r\n\r\n")
        assert reply(s).startswith(b"HTTP/1.1 400")


ENDINGS: dict[str, Callable[[Running], None]] = {
    "normal close": normal_close,
    "kept alive, then dropped": kept_alive_then_dropped,
    "client reset": client_reset,
    "upgrade attempts": upgrade_attempts,
    "408 header deadline": header_deadline,
    "h11 protocol error": protocol_error,
}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_every_ending_gives_the_slot_back(ending: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connections, "HEADERS_S", 0.5)
    with running() as r:
        ENDINGS[ending](r)
        assert r.settled(0) == 0, f"{r.held} slots still held after: {ending}"
        # and the address is served as before
        with r.connect() as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert reply(s).startswith(b"HTTP/1.1 200")
        assert r.settled(0) == 0


def test_a_shutdown_gives_every_slot_back() -> None:
    with running() as r:
        idle = [r.connect() for _ in range(3)]
        for s in idle[:2]:
            s.sendall(GET)  # answered, then kept alive
            assert reply(s).startswith(b"HTTP/1.1 200")
        idle[2].sendall(b"GET / HTTP/1.1\r\n")  # half a request's headers
        assert r.settled(3) == 3
        r.server.should_exit = True
        r.thread.join(10)
        assert not r.thread.is_alive()
        assert r.held == 0
        for s in idle:
            s.close()
