"""The front door: every request is checked from its method, path and headers alone (Host,
Origin, key, namespace scope, rate, Content-Length, Content-Type) before a byte of its body is
read, and its body is counted as it streams in, refused (413) the moment it passes its route's
limit (`policy.classify`). FastAPI reads and decodes a whole body before a route's dependencies
run, so a key check there comes after the memory is spent; here it comes first.

These are plain ASGI, not Starlette's BaseHTTPMiddleware, so streamed responses (NDJSON answers,
MCP's SSE) pass through untouched.
"""

from __future__ import annotations

import email.message
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from terag_neo4j.errors import TeragError
from terag_neo4j.service.audit import UNAUDITED
from terag_neo4j.service.auth import CALLER, authenticate, authorize
from terag_neo4j.service.http_errors import ServiceError, error_body
from terag_neo4j.service.policy import (
    UNTHROTTLED,
    AddressThrottle,
    RateLimiter,
    Rule,
    allowed_hosts,
    classify,
    host_refusal,
    origin_refusal,
    retry_after,
)
from terag_neo4j.service.settings import OPEN, KeyRing, Principal, ServiceSettings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


async def send_error(
    send: Send, status: int, type_: str, message: str, headers: dict[str, str] | None = None
) -> None:
    body = json.dumps(error_body(type_, message)).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _content_type(value: str) -> str:
    msg = email.message.Message()
    msg["content-type"] = value
    return msg.get_content_type()


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _too_large(limit: int) -> ServiceError:
    return ServiceError(413, f"request body over {limit:,} bytes, this route's limit")


class BodyTooLarge(TeragError):
    """Raised into the app from `receive` once the body passed its limit (already answered)."""


class FrontDoor:
    """Refuses, before reading the body: a foreign Host (400), a cross-site state-changing
    request (403), a missing or unknown key (401), a namespace outside the key's scope (403),
    a key over its rate (429), a declared length over the route's limit (413), a body of the
    wrong type (415). The body is then counted as the route reads it: 413 past the limit."""

    def __init__(self, app: ASGIApp, service: ServiceSettings, keys: KeyRing) -> None:
        self.app = app
        self.keys = keys
        self.max_body_bytes = service.max_body_bytes
        self.max_archive_bytes = service.max_archive_bytes
        self.hosts = allowed_hosts(service.host, service.allowed_hosts)
        self.cors = frozenset(service.cors_origins)
        self.rates = RateLimiter(service.rate_limit)
        self.anonymous = AddressThrottle()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        try:
            rule = classify(
                scope["method"], scope["path"], self.max_body_bytes, self.max_archive_bytes
            )
            principal = self.admit(scope, headers, rule)
            self.check_body(scope, headers, rule)
        except ServiceError as e:
            await send_error(send, e.status, e.type, e.message, e.headers)
            return
        token = CALLER.set(principal)
        try:
            await self._forward(scope, receive, send, rule.max_body)
        finally:
            CALLER.reset(token)

    def admit(self, scope: Scope, headers: dict[str, str], rule: Rule) -> Principal | None:
        """The caller, or a ServiceError saying why not; None for a public route."""
        why = host_refusal(headers, self.hosts)
        if why:
            self.throttle(scope)
            raise ServiceError(400, why)
        why = origin_refusal(scope["method"], headers, scope.get("scheme", "http"), self.cors)
        if why:
            self.throttle(scope)
            raise ServiceError(403, why)
        if rule.public:
            if scope["path"] not in UNTHROTTLED:
                self.throttle(scope)
            return None
        try:
            principal = authenticate(self.keys, headers)
        except ServiceError:
            self.throttle(scope)
            raise
        if rule.namespace is not None:
            authorize(principal, rule.namespace, rule.write)
        wait = self.rates.take(principal)
        if wait > 0:
            rate = self.rates.limit(principal)
            who = "this key's" if principal is not OPEN else "the service's"
            raise ServiceError(
                429,
                f"rate limited: {who} limit: {rate:g} per second; retry after "
                f"{retry_after(wait)} s",
                headers={"Retry-After": retry_after(wait)},
            )
        return principal

    def throttle(self, scope: Scope) -> None:
        """A request without a valid key: 429 once its address is past `AddressThrottle`'s
        rate, with no audit line (a refused write would write one each)."""
        client = scope.get("client")
        wait = self.anonymous.take(str(client[0]) if client else "")
        if wait > 0:
            scope[UNAUDITED] = True
            raise ServiceError(
                429,
                "too many requests without a valid key from this address; retry after "
                f"{retry_after(wait)} s",
                headers={"Retry-After": retry_after(wait)},
            )

    @staticmethod
    def check_body(scope: Scope, headers: dict[str, str], rule: Rule) -> None:
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                raise ServiceError(400, "invalid Content-Length")
            if int(length) > rule.max_body:
                raise _too_large(rule.max_body)
        has_body = length is None or int(length) > 0
        if scope["method"] in BODY_METHODS and rule.content_type and has_body:
            got = _content_type(headers.get("content-type", ""))
            if got != rule.content_type:
                raise ServiceError(
                    415,
                    f"Content-Type must be {rule.content_type}, got "
                    f"{headers.get('content-type') or 'none'}",
                )

    async def _forward(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """The app, with its body counted as it arrives (a chunked one has no length up front)
        and nothing buffered here: past `limit` the 413 goes out at once, the app's reading
        fails, and whatever it sends after is dropped."""
        seen = 0
        started = False
        refused = False

        async def counted() -> Message:
            nonlocal seen, refused
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    first, refused = not refused, True
                    e = _too_large(limit)
                    if first and not started:
                        await send_error(send, e.status, e.type, e.message)
                    raise BodyTooLarge(e.message)
            return msg

        async def guarded(msg: Message) -> None:
            nonlocal started
            if refused:
                return
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, counted, guarded)
        except BodyTooLarge:
            pass
        except Exception:
            if not refused:
                raise


class RequireKey:
    """The MCP endpoint behind the same keys as the HTTP API (401 without a valid one); the
    tools check each namespace against the key themselves. The front door checked the key
    already: this is the second lock on the same door."""

    def __init__(self, app: ASGIApp, keys: KeyRing) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                authenticate(self.keys, _headers(scope))
            except ServiceError as e:
                await send_error(send, e.status, e.type, e.message, e.headers)
                return
        await self.app(scope, receive, send)
