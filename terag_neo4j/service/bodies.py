"""Large JSON bodies (texts to index, up to TERAG_MAX_BODY_BYTES) are read, decoded and
validated inside an admission of their own, the decoding in a thread.

FastAPI would read and decode a body on the event loop before the route runs, with no bound on
how many are in memory at once: 64 bodies of 32 MiB from one key were 2 GiB of buffers, and
their decoding stalled every other caller. Here a body over LARGE_BODY_BYTES (or of unknown
length) waits for a slot before a byte of it is read; beyond the slots and the queue it is
refused (429) unread, and one key holds at most half of either when the service has several.
Small bodies are decoded on the loop, as before: they cost less than a thread hop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from terag_neo4j.service.admission import Admission
from terag_neo4j.service.auth import CALLER
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.schemas import TextsRequest

if TYPE_CHECKING:
    from fastapi import Request

LARGE_BODY_BYTES = 1024 * 1024
# Large bodies read and decoded at once in the process. Decoding holds the GIL (pydantic's
# validator is one native call: about 0.1 s for one 32 MiB text, up to a second for 32 MiB of
# escaped characters on a loaded machine), so more threads add no throughput, only memory
# (about three times the body each) and longer stalls of the event loop; two let a second key
# in while one key's body is decoded.
RUNNING = 2
# Large bodies that may wait for a slot (unread: their senders are held by TCP's flow
# control, not by our memory); a key's share is half of it with several keys
WAITING = 8


def _decode(raw: bytes) -> TextsRequest:
    try:
        return TextsRequest.model_validate_json(raw)
    except ValidationError as e:
        # The caller's input is not kept: a 32 MiB string must not live on in an error
        errors = e.errors(include_input=False, include_url=False, include_context=False)
        raise RequestValidationError(
            [{**err, "loc": ("body", *err["loc"])} for err in errors]
        ) from None


class BodyGate:
    """The admission of large bodies (per process `RUNNING` at once and `WAITING` queued; with
    several keys, each key half of both)."""

    def __init__(self, wait_s: float, shared: bool) -> None:
        self.admission = Admission(
            RUNNING, WAITING, wait_s, shared, what="large request bodies", threads="terag-body"
        )

    async def texts(self, request: Request) -> TextsRequest:
        """The request's body as a `TextsRequest`; a 422 (RequestValidationError) if it is not
        one, 429/503 when too many large bodies are in flight."""
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) <= LARGE_BODY_BYTES:
            return _decode(await request.body())
        who = CALLER.get()
        try:
            return await self.admission.run_after(request.body, _decode, who.name if who else "")
        except ServiceError as e:
            if e.status in (429, 503):
                # Refused unread: closing the connection spares the loop the rest of the body
                # (uvicorn would read it, and throw it away, to keep the connection alive)
                e.headers = {**(e.headers or {}), "Connection": "close"}
            raise

    def close(self) -> None:
        self.admission.close()
