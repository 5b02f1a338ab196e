"""Large JSON bodies (texts to index, up to TERAG_MAX_BODY_BYTES) are read, decoded and
validated inside an admission of their own, the decoding in a worker process.

FastAPI would read and decode a body on the event loop before the route runs, with no bound on
how many are in memory at once: 64 bodies of 32 MiB from one key were 2 GiB of buffers, and
their decoding stalled every other caller. Here a body over LARGE_BODY_BYTES (or of unknown
length) waits for a slot before a byte of it is read; beyond the slots and the queue it is
refused (429) unread, and one key holds at most half of either when the service has several.
Small bodies are decoded on the loop, as before: they cost less than a thread hop.

Decoding in a thread holds the service's GIL: pydantic decodes a body in one native call (0.05 s
of CPU for 32 MiB, the event loop waiting throughout; on a machine at load 20 the thread
holding the GIL is descheduled for much longer), and /v1/health took 1.17 s under 64 bodies of
one 32 MiB text. So a decoding worker process (`parse_worker`, started without its readers)
decodes and checks a large body first: an invalid body, or one with a text over the document
limit, is refused without a string of it made in the service. A valid one is decoded again
here (sending its texts back and making strings of them cost the loop more than this decode).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from terag_neo4j.service.admission import Admission
from terag_neo4j.service.auth import CALLER
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.parsing import ParsePool
from terag_neo4j.service.schemas import TextsRequest

if TYPE_CHECKING:
    from fastapi import Request

    from terag_neo4j.core.documents import Document

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


def _invalid(errors: list[Any]) -> RequestValidationError:
    return RequestValidationError([{**err, "loc": ("body", *err["loc"])} for err in errors])


def _decode(raw: bytes) -> list[Document]:
    try:
        body = TextsRequest.model_validate_json(raw)
    except ValidationError as e:
        # The caller's input is not kept: a 32 MiB string must not live on in an error
        raise _invalid(
            e.errors(include_input=False, include_url=False, include_context=False)
        ) from None
    return [d.document() for d in body.documents]


async def _chunks(request: Request) -> list[bytes]:
    """The body as received, not joined: joining 32 MiB on the loop is a copy that holds it."""
    return [chunk async for chunk in request.stream()]


class BodyGate:
    """The admission of large bodies (per process `RUNNING` at once and `WAITING` queued; with
    several keys, each key half of both)."""

    def __init__(self, wait_s: float, shared: bool, timeout_s: float) -> None:
        self.admission = Admission(
            RUNNING, WAITING, wait_s, shared, what="large request bodies", threads="terag-body"
        )
        # One decoding worker for each admitted body: the admission is the only queue
        self.decoder = ParsePool(RUNNING, timeout_s, wait_s, kind="texts")

    def start(self) -> None:
        self.decoder.start()

    def _decode_large(self, chunks: list[bytes]) -> list[Document]:
        found = self.decoder.check_texts(chunks)
        if "invalid" in found:
            raise _invalid(found["invalid"])
        return _decode(b"".join(chunks))

    async def texts(self, request: Request) -> list[Document]:
        """The documents of a `TextsRequest` body; a 422 (RequestValidationError) if it is not
        one, 429/503 when too many large bodies are in flight."""
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) <= LARGE_BODY_BYTES:
            return _decode(await request.body())
        who = CALLER.get()
        try:
            return await self.admission.run_after(
                lambda: _chunks(request), self._decode_large, who.name if who else ""
            )
        except ServiceError as e:
            if e.status in (429, 503):
                # Refused unread: closing the connection spares the loop the rest of the body
                # (uvicorn would read it, and throw it away, to keep the connection alive)
                e.headers = {**(e.headers or {}), "Connection": "close"}
            raise

    def close(self) -> None:
        self.admission.close()
        self.decoder.close()
