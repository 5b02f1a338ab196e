"""Slow and greedy clients against a real `terag serve` started under the usual limit of 1,024
open files: 1,200 sockets from one address that send their headers a line at a time took
every file descriptor (health timed out for everyone, and the log grew by "Too many open files"
lines without end). Now one address holds at most TERAG_MAX_CONNECTIONS_PER_CLIENT, headers
are due within HEADERS_S, and another address is served throughout."""

from __future__ import annotations

import contextlib
import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.service.connections import HEADERS_S
from tests.service.conftest import running_service, service_env

ATTACKERS = 1200
PER_CLIENT = 64  # the default TERAG_MAX_CONNECTIONS_PER_CLIENT


def _files_1024() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


@pytest.fixture
def limited(
    base_settings: Settings, tenants: tuple[str, str], tmp_path: Path
) -> Iterator[tuple[str, Path]]:
    """A service whose process may open 1,024 files, soft and hard."""
    log = tmp_path / "serve.log"
    env = service_env(base_settings, *tenants)
    with running_service(env, base_settings, tenants, log, preexec_fn=_files_1024) as svc:
        yield svc.url, log


def health_from(url: str, address: str) -> int | str:
    transport = httpx.HTTPTransport(local_address=address)
    try:
        with httpx.Client(transport=transport, timeout=10) as c:
            return c.get(f"{url}/v1/health").status_code
    except httpx.HTTPError as e:
        return type(e).__name__


def reply(s: socket.socket) -> bytes:
    """What the server sent before it closed, or b"" if it is still open and silent."""
    data = b""
    with contextlib.suppress(OSError):
        while chunk := s.recv(4096):
            data += chunk
    return data


def one_response(s: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(4096)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += s.recv(4096)
    return data


def test_slow_sockets_from_one_address_neither_exhaust_files_nor_starve_others(
    limited: tuple[str, Path],
) -> None:
    url, log = limited
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < ATTACKERS + 256:
        pytest.skip(f"this process may open {hard} files; the attack needs {ATTACKERS + 256}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, ATTACKERS + 256), hard))
    port = urlsplit(url).port
    assert port is not None
    socks: list[socket.socket] = []
    try:
        for _ in range(ATTACKERS):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            socks.append(s)
        assert health_from(url, "127.0.0.2") == 200
        # One full request on a kept-alive connection, then a second one that never ends
        again = socket.create_connection(("127.0.0.1", port), 10, ("127.0.0.3", 0))
        socks.append(again)
        again.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert one_response(again).startswith(b"HTTP/1.1 200")
        again.sendall(b"GET /v1/health HTTP/1.1\r\n")
        for s in socks:  # a header line now and then keeps a connection busy, not finished
            with contextlib.suppress(OSError):
                s.sendall(b"X-Slow: 1\r\n")
        time.sleep(HEADERS_S + 2)
        assert health_from(url, "127.0.0.2") == 200
        for s in socks:
            s.settimeout(5)
        replies = [reply(s) for s in socks[:-1]]
        second = reply(again)
    finally:
        for s in socks:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    refused = [r for r in replies if r.startswith(b"HTTP/1.1 503")]
    timed_out = [r for r in replies if r.startswith(b"HTTP/1.1 408")]
    assert len(refused) >= ATTACKERS - PER_CLIENT, len(refused)
    assert b"too many connections from this address" in refused[0]
    assert 0 < len(timed_out) <= PER_CLIENT and len(refused) + len(timed_out) == ATTACKERS
    assert second.startswith(b"HTTP/1.1 408"), second
    assert health_from(url, "127.0.0.1") == 200  # the address is served again once they close
    text = log.read_text(errors="replace")
    assert "Too many open files" not in text
    assert text.count("refusing connections") == 1  # once a minute, not once a connection
