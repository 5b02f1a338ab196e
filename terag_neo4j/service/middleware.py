"""ASGI guards in front of the routes: body size (413), content type (415), and the key check
for the MCP endpoint (401), each answering in the service's one error shape.

They are plain ASGI, not Starlette's BaseHTTPMiddleware, so streamed responses (NDJSON answers,
MCP's SSE) pass through untouched.
"""

from __future__ import annotations

import email.message
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from terag_neo4j.service.auth import authenticate
from terag_neo4j.service.errors import ServiceError, error_body
from terag_neo4j.service.settings import KeyRing

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UPLOAD_SUFFIX = "/documents/upload"


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


class BodyGuard:
    """Refuses bodies over `max_bytes` (413) and, under /v1, bodies that are not JSON (or
    multipart for uploads) (415), before any route reads them."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        length = headers.get("content-length")
        too_large = f"request body over {self.max_bytes:,} bytes"
        if length is not None:
            if not length.isdigit():
                await send_error(send, 400, "BadRequest", "invalid Content-Length")
                return
            if int(length) > self.max_bytes:
                await send_error(send, 413, "PayloadTooLarge", too_large)
                return
        path: str = scope["path"]
        has_body = length is None or int(length) > 0
        if path.startswith("/v1/") and has_body:
            want = "multipart/form-data" if path.endswith(UPLOAD_SUFFIX) else "application/json"
            got = _content_type(headers.get("content-type", ""))
            if got != want:
                await send_error(
                    send,
                    415,
                    "UnsupportedMediaType",
                    f"Content-Type must be {want}, got {headers.get('content-type') or 'none'}",
                )
                return
        if length is not None:
            await self.app(scope, receive, send)
            return
        # A chunked body has no length up front: read it (up to the limit) before the route does
        chunks: list[bytes] = []
        size = 0
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return  # the client went away
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await send_error(send, 413, "PayloadTooLarge", too_large)
                return
            chunks.append(chunk)
            if not msg.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class RequireKey:
    """The MCP endpoint behind the same keys as the HTTP API (401 without a valid one); the
    tools check each namespace against the key themselves."""

    def __init__(self, app: ASGIApp, keys: KeyRing) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
            }
            try:
                authenticate(self.keys, headers)
            except ServiceError as e:
                await send_error(send, e.status, e.type, e.message, e.headers)
                return
        await self.app(scope, receive, send)
