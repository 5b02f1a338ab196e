"""What a connection may hold before it has sent a request: uvicorn's HTTP/1.1 protocol with
the limits a reverse proxy would otherwise set (nginx's client_header_timeout and limit_conn).

uvicorn times out only idle keep-alive connections, so a client that opens sockets and sends
its headers a line at a time keeps every one of them: 1,200 from one address took every file
descriptor of a service at the usual limit of 1,024, after which /v1/health timed out for
everyone and the log grew by about 20,000 "Too many open files" lines a second
(docs/service.md, "Slow and greedy clients"). Here a request's headers must arrive within
`HEADERS_S` of the connection (or of the previous response on it), one address holds at most
TERAG_MAX_CONNECTIONS_PER_CLIENT connections, and the process as a whole stays below its file
limit; a connection past a limit is answered 503 and closed before anything is read.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import time
import weakref
from collections import Counter
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from terag_neo4j.service.http_errors import error_body

log = logging.getLogger(__name__)

HEADERS_S = 10.0  # from a connection (or a response) to the end of the next request's headers
# File descriptors kept for Neo4j's connections, the parse workers' pipes and the model files
SPARE_FDS = 256
# Connections waiting to be accepted, which asyncio also accepts in one go: uvicorn's 2,048
# took more file descriptors at once than a limit of 1,024 holds before any could be refused
BACKLOG = 128
WARN_EVERY_S = 60.0  # one line a minute about refused connections, however many there are


def _response(status: str, type_: str, message: str) -> bytes:
    body = json.dumps(error_body(type_, message)).encode()
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\nconnection: close\r\n"
        f"retry-after: 5\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


UNAVAILABLE = "503 Service Unavailable"
TOO_MANY = _response(UNAVAILABLE, "ServiceUnavailable", "too many connections from this address")
FULL = _response(UNAVAILABLE, "ServiceUnavailable", "too many connections; retry")
TOO_SLOW = _response("408 Request Timeout", "RequestTimeout", "the request's headers took too long")


def raise_file_limit() -> int:
    """The soft limit on open files raised to the hard one (often 1,024 against 524,288), as
    servers do at start; returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def guarded_protocol(per_client: int, max_connections: int) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol with the header deadline and the connection limits."""
    held: weakref.WeakKeyDictionary[Any, Counter[str]] = weakref.WeakKeyDictionary()
    last_warned = [0.0]

    def refuse(transport: asyncio.Transport, reply: bytes, why: str) -> None:
        transport.write(reply)
        transport.close()
        now = time.monotonic()
        if now - last_warned[0] > WARN_EVERY_S:
            last_warned[0] = now
            log.warning("refusing connections: %s (logged once a minute)", why)

    class GuardedH11Protocol(H11Protocol):
        _host: str | None = None
        _deadline: asyncio.TimerHandle | None = None

        @staticmethod
        def slots_held() -> int:
            """The connections counted against their addresses now, over every server."""
            return sum(sum(c.values()) for c in held.values())

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            counts = held.setdefault(self.server_state, Counter())
            host = self.client[0] if self.client else ""
            if len(self.connections) > max_connections:
                refuse(transport, FULL, f"{len(self.connections)} open, at most {max_connections}")
            elif counts[host] >= per_client:
                why = f"{host} holds {counts[host]} (TERAG_MAX_CONNECTIONS_PER_CLIENT)"
                refuse(transport, TOO_MANY, why)
            else:
                self._host = host
                counts[host] += 1
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._release()
            super().connection_lost(exc)

        def _release(self) -> None:
            """The connection's slot given back, once, however the connection ends."""
            self._disarm()
            if self._host is not None:
                counts = held[self.server_state]
                counts[self._host] -= 1
                if counts[self._host] <= 0:
                    del counts[self._host]
                self._host = None

        def handle_websocket_upgrade(self, event: Any) -> None:
            # The socket goes to another protocol object, whose end this one never hears of:
            # 64 upgrades from one address held its slots until restart. The service runs
            # with ws="none" (it has no WebSocket route), so this is the second lock.
            self._release()
            super().handle_websocket_upgrade(event)

        def _unsupported_upgrade_warning(self) -> None:
            # uvicorn logs two lines per request that asks for an upgrade; a caller without a
            # key could write the log at will. The request is answered as a plain one.
            pass

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request's headers are in: the app has it now
                self._disarm()

        def on_response_complete(self) -> None:
            self._arm()  # before uvicorn reads a pipelined request, which disarms it again
            super().on_response_complete()

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(HEADERS_S, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.write(TOO_SLOW)
                self.transport.close()

    return GuardedH11Protocol
