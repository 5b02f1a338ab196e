"""What an operator sees of each request: an `X-Request-ID` on the response and on every log
line the request causes, its count and latency in /metrics, and one audit line per write.

`Observe` is the outermost ASGI layer (outside Starlette's error middleware, so a 500 from an
unexpected error carries the id too). Log lines get the id from a context variable through
`RequestIdFilter`; `configure_logging` puts the filter and a text or JSON formatter on the root
handlers, and uvicorn's loggers propagate to them.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import re
import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI

from terag_neo4j import tracing
from terag_neo4j.service.audit import audit_write, write_action
from terag_neo4j.service.metrics import METHODS
from terag_neo4j.service.middleware import send_error

if TYPE_CHECKING:
    from starlette.routing import BaseRoute
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from terag_neo4j.service.metrics import HttpMetrics

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "terag_request_id", default=None
)
# A caller's id is kept when it is short and plain (no spaces, quotes or line breaks to forge
# log lines with); otherwise the service makes one
_SANE_ID = re.compile(rb"[A-Za-z0-9._:/+=-]{1,128}")
_HEADER = b"x-request-id"
UNMATCHED = "unmatched"


def request_id_of(headers: Iterable[tuple[bytes, bytes]]) -> str:
    for k, v in headers:
        if k == _HEADER:
            if _SANE_ID.fullmatch(v):
                return v.decode("ascii")
            break
    return os.urandom(16).hex()


class Observe:
    """Request id, metrics and audit around the whole app (plain ASGI: streams pass through)."""

    def __init__(self, app: ASGIApp, routes: list[BaseRoute], http: HttpMetrics | None) -> None:
        self.app = app
        self.routes = routes
        self.http = http
        self._flat: list[BaseRoute] | None = None

    def _route(self, scope: Scope) -> str:
        """The route template the router chose, or for a request refused before routing (body
        too large, wrong content type, no key) the one it would have chosen."""
        route = scope.get("route")
        if route is None:
            from starlette.routing import Match

            if self._flat is None:
                self._flat = list(_flatten(self.routes))
            for r in self._flat:
                match, child = r.matches(scope)
                if match != Match.NONE:
                    route = r  # and its namespace for the audit line (the request is done)
                    scope.setdefault("path_params", child.get("path_params", {}))
                    break
        return str(getattr(route, "path", UNMATCHED)) if route is not None else UNMATCHED

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id_of(scope["headers"])
        # A made-up method (up to h11's header limit) is no span name: OTel's `_OTHER`
        method = scope["method"] if scope["method"] in METHODS else "_OTHER"
        attributes = {"http.request.method": method, "terag.request_id": rid}
        with tracing.span(method, attributes, server=True) as sp:
            await self._observe(scope, receive, send, rid, sp, method)

    async def _observe(
        self, scope: Scope, receive: Receive, send: Send, rid: str, sp: Any, label: str
    ) -> None:
        token = REQUEST_ID.set(rid)
        header = (_HEADER, rid.encode("ascii"))
        status = 500  # what the client gets if the app dies before answering
        started = False

        async def send_id(message: Message) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                status, started = message["status"], True
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        http = self.http
        if http is not None:
            http.in_flight.inc()
        start = time.perf_counter()
        method: str = scope["method"]
        try:
            await self.app(scope, receive, send_id)
        except asyncio.CancelledError:
            # Only the server cancels a request's task: its graceful shutdown ran out. The
            # caller is told to retry (elsewhere, or once the service is back), not sent a 500.
            if started:
                raise
            await send_error(
                send_id,
                503,
                "ServiceUnavailable",
                "the service is stopping; retry",
                {"Retry-After": "5"},
            )
        finally:
            seconds = time.perf_counter() - start
            named = http is not None or method != "GET" or sp is not None
            route = self._route(scope) if named else UNMATCHED
            tracing.finish_request(sp, label, route, status)
            if http is not None:
                http.in_flight.dec()
                http.observe(route, method, status, seconds)
            action = write_action(method, route)
            if action is not None:
                audit_write(scope, action, status)
            REQUEST_ID.reset(token)


def _flatten(routes: Iterable[BaseRoute]) -> Iterable[BaseRoute]:
    """Routes with the routers FastAPI includes lazily opened up (their routes carry the full
    path, prefix included)."""
    for r in routes:
        inner = getattr(getattr(r, "original_router", None), "routes", None)
        if inner is not None:
            yield from _flatten(inner)
        else:
            yield r


class ObservedFastAPI(FastAPI):
    """FastAPI with `Observe` outside every other layer (set `state.metrics` before the first
    request, or `state.metrics = None` for no metrics)."""

    def build_middleware_stack(self) -> ASGIApp:
        metrics = getattr(self.state, "metrics", None)
        http = metrics.http if metrics is not None else None
        return Observe(super().build_middleware_stack(), self.router.routes, http)


# ---------------------------------------------------------------------- logging


class RequestIdFilter(logging.Filter):
    """Puts the current request's id (or None) on every record as `request_id`."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        rid = getattr(record, "request_id", None)
        return f"{text} [request {rid}]" if rid else text


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request_id, the record's `fields`
    (the audit line's), and the exception's trace when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        if rid:
            line["request_id"] = rid
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure_logging(fmt: str) -> None:
    """The root handlers (one on stderr if there is none) write `fmt` ("text" or "json"), each
    line with its request's id; Python warnings go through logging too, so every line of the
    process has the one format."""
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler(sys.stderr))
    formatter = JsonFormatter() if fmt == "json" else TextFormatter()
    for h in root.handlers:
        h.setFormatter(formatter)
        if not any(isinstance(f, RequestIdFilter) for f in h.filters):
            h.addFilter(RequestIdFilter())
    logging.captureWarnings(True)
    # The audit is kept whatever the root level (the service's own log may be set quieter)
    logging.getLogger("terag_neo4j.audit").setLevel(logging.INFO)
