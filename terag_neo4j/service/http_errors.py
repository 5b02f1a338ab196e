"""One error shape for every response: `{"error": {"type", "message"}}` with the right status.

The project's errors are mapped by class name along their MRO, so this module needs none of the
stages imported (a `TeragError` from a stage that never loaded cannot occur anyway), and a new
subclass inherits its parent's status.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from terag_neo4j.errors import TeragError

log = logging.getLogger(__name__)

# Most specific first does not matter: the first class in the exception's MRO that is named
# here decides.
STATUS_BY_ERROR: dict[str, int] = {
    "NamespaceNotFound": 404,
    "InputNotFound": 404,
    "NotFound": 404,
    "InvalidNamespace": 422,
    "InputError": 422,
    "ArchiveError": 422,  # a corrupt, hostile, newer or other-model archive: nothing written
    "SettingsError": 422,
    "KnobError": 422,
    "RetrievalError": 422,
    "ServiceConfigError": 422,
    "EmbeddingModelMismatch": 409,
    "ReadNeedsWriter": 409,  # what the read needs, a key that may write must build first
    "Neo4jUnavailable": 503,
    "GraphStoreError": 503,
    "LLMUnavailableError": 503,
    "ModelNotFoundError": 503,
    "LLMError": 502,
    "RerankError": 502,  # the reranker (an endpoint, or a model that failed) did not answer
    "DependencyError": 501,
    "EmbeddingError": 500,
    "TeragError": 500,
}

_TYPE_BY_STATUS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    413: "PayloadTooLarge",
    415: "UnsupportedMediaType",
    422: "ValidationError",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
}


class ServiceError(TeragError):
    """An error the service itself raises, with its status, type and extra headers."""

    def __init__(
        self,
        status: int,
        message: str,
        type_: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type_ or _TYPE_BY_STATUS.get(status, "Error")
        self.message = message
        self.headers = headers or {}


def status_for(e: BaseException) -> tuple[int, str]:
    """The HTTP status and error type of a project error."""
    for cls in type(e).__mro__:
        if cls.__name__ in STATUS_BY_ERROR:
            name = type(e).__name__
            return STATUS_BY_ERROR[cls.__name__], name
    return 500, "InternalError"


# The store's "not found" names the namespaces that do exist: another tenant's, behind a key
_KNOWN = "(known: "
MAX_PUBLIC_CHARS = 1000
# What a 503 says: the error's own message names the Neo4j URI or the model server's address,
# which are the operator's (the service log has them), not the caller's
STORE_DOWN = "Neo4j is not answering; retry later (the service log says why)"
# A reader that is down still leaves retrieval working: the caller is told which part is down
LLM_DOWN = "the LLM is not answering; retry later (the service log says why)"
OTHER_DOWN = "a service this call needs is not answering; retry later (the service log says why)"


def without_known(text: str) -> str:
    """`text` without its "(known: ...)" lists and the blanks before each. A scan with
    `str.find`, not a regex: the pattern `\\s*\\(known: [^)]*\\)` backtracked over a run of
    spaces (16,000 took 0.7 s, a megabyte would take most of an hour, on the event loop)."""
    out: list[str] = []
    at = 0
    while (start := text.find(_KNOWN, at)) >= 0:
        end = text.find(")", start)
        if end < 0:
            break
        out.append(text[at:start].rstrip())
        at = end + 1
    out.append(text[at:])
    return "".join(out)


def without_addresses(text: str) -> str:
    """`text` with each word that is a URI (`bolt://user@host:7687`) or a `host:port` put as
    `<address>`: a 503 tells a caller that something is down, not where it lives. At most
    `MAX_PUBLIC_CHARS` characters come out, so only the first ten times that are read."""
    words = text[: 10 * MAX_PUBLIC_CHARS].split(" ")
    for i, w in enumerate(words):
        host, colon, port = w.strip("()[]'\",;.").rpartition(":")
        if "://" in w or (colon and host and port.isdigit()):
            words[i] = "<address>"
    return _cut(" ".join(words))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_PUBLIC_CHARS else text[: MAX_PUBLIC_CHARS - 3] + "..."


def public_message(e: BaseException) -> str:
    """The error's message as a caller may see it: no other tenant's namespaces, no internal
    address in a 5xx of the store, and at most `MAX_PUBLIC_CHARS` characters. Linear in the
    message, which itself quotes a caller's argument only as a short prefix (`errors.echo`)."""
    status, _ = status_for(e)
    if status == 503:
        bases = {cls.__name__ for cls in type(e).__mro__}
        if "GraphStoreError" in bases:
            return STORE_DOWN
        return LLM_DOWN if "LLMError" in bases else OTHER_DOWN
    return _cut(without_known(str(e)))


def error_body(type_: str, message: str) -> dict[str, Any]:
    return {"error": {"type": type_, "message": message}}


def error_response(
    status: int, type_: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(type_, message), status_code=status, headers=headers)


def _validation_message(e: RequestValidationError) -> str:
    parts = []
    for err in e.errors()[:5]:
        if err.get("type") == "json_invalid":
            parts.append("body: not valid JSON")
            continue
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install(app: FastAPI) -> None:
    """Exception handlers that give every error the one shape."""

    async def on_service(_: Request, e: Exception) -> JSONResponse:
        assert isinstance(e, ServiceError)
        return error_response(e.status, e.type, e.message, e.headers)

    async def on_terag(_: Request, e: Exception) -> JSONResponse:
        status, type_ = status_for(e)
        if status >= 500:
            log.warning("%s: %s", type_, e)
        return error_response(status, type_, public_message(e))

    async def on_validation(_: Request, e: Exception) -> JSONResponse:
        assert isinstance(e, RequestValidationError)
        return error_response(422, "ValidationError", _validation_message(e))

    async def on_http(_: Request, e: Exception) -> JSONResponse:
        assert isinstance(e, StarletteHTTPException)
        status = e.status_code
        return error_response(
            status,
            _TYPE_BY_STATUS.get(status, "Error"),
            str(e.detail),
            dict(e.headers) if e.headers else None,
        )

    async def on_other(_: Request, e: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return error_response(500, "InternalError", f"{type(e).__name__}: see the service log")

    app.add_exception_handler(ServiceError, on_service)
    app.add_exception_handler(TeragError, on_terag)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_other)
