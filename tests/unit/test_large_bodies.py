"""Large JSON bodies wait for a slot of their own before a byte is read, and are decoded in a
worker process into the documents, and the errors, of a decode in the service (unit test of the
admission of bodies: real Starlette requests, whose `receive` is a stand-in that hands out the
body and counts its calls; real decoding workers)."""

from __future__ import annotations

import asyncio
import json

import pytest
from fastapi.exceptions import RequestValidationError
from starlette.requests import Request

from terag_neo4j.service import bodies
from terag_neo4j.service.auth import CALLER
from terag_neo4j.service.bodies import LARGE_BODY_BYTES, RUNNING, WAITING, BodyGate
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.settings import Principal

BIG = json.dumps({"documents": [{"id": "big", "text": "x" * (LARGE_BODY_BYTES + 10)}]}).encode()


class Sender:
    """A client's body, handed out once `go` is set; `reads` counts the app's receive calls."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.go = asyncio.Event()
        self.reads = 0

    async def receive(self) -> dict[str, object]:
        self.reads += 1
        await self.go.wait()
        return {"type": "http.request", "body": self.body, "more_body": False}

    def request(self) -> Request:
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/v1/namespaces/a/documents",
            "headers": [(b"content-length", str(len(self.body)).encode())],
        }
        return Request(scope, self.receive)


def test_large_bodies_past_a_keys_share_are_refused_unread() -> None:
    async def flood() -> None:
        gate = BodyGate(wait_s=30, shared=True, timeout_s=60)
        CALLER.set(Principal("key-a", None, True))
        share = max(1, RUNNING // 2) + WAITING // 2  # this key's running and waiting
        senders = [Sender(BIG) for _ in range(share + 1)]
        tasks = [asyncio.ensure_future(gate.texts(s.request())) for s in senders[:share]]
        await asyncio.sleep(0.1)
        assert [s.reads for s in senders[:share]] == [1] + [0] * (share - 1)  # one read at once
        with pytest.raises(ServiceError) as refused:
            await gate.texts(senders[-1].request())
        assert refused.value.status == 429 and senders[-1].reads == 0
        assert refused.value.headers["Connection"] == "close"
        assert "this key has" in refused.value.message
        for s in senders:
            s.go.set()
        done = await asyncio.gather(*tasks)
        assert all(len(r[0].text) == LARGE_BODY_BYTES + 10 for r in done)
        gate.close()

    asyncio.run(flood())


def test_a_small_body_is_decoded_at_once_and_errors_are_one_validation_error() -> None:
    async def small() -> None:
        gate = BodyGate(wait_s=30, shared=True, timeout_s=60)
        ok = Sender(b'{"documents": [{"id": "a", "text": "Alpha.", "pages": [0, 3]}]}')
        ok.go.set()
        assert (await gate.texts(ok.request()))[0].pages == (0, 3)
        bad = Sender(b'{"documents": [{"id": "a", "text": "Alpha.", "pages": [3, 3]}]}')
        bad.go.set()
        with pytest.raises(RequestValidationError) as e:
            await gate.texts(bad.request())
        (err,) = e.value.errors()
        assert err["loc"] == ("body", "documents", 0, "pages") and "input" not in err
        gate.close()

    asyncio.run(small())


def test_a_large_body_decoded_by_a_worker_is_what_the_service_would_decode() -> None:
    """Texts of every kind (escapes, non-ASCII, an astral character, pages) come back equal, and
    an invalid large body gets the validation error a small one gets, without its input."""
    text = 'Caf\u00e9 \u4e2d\u6587 \U0001f600 tab\tquote" ' + "x" * LARGE_BODY_BYTES
    docs = [
        {"id": "a", "text": text, "title": "T\u00e9", "pages": [0, 5]},
        {"id": "b", "text": "Short.", "is_passage": True, "source": "s.md"},
    ]
    raw = ('{"documents": ' + json.dumps(docs) + "}").encode()
    bad_raw = raw.replace(b'"pages": [0, 5]', b'"pages": [5, 5]')

    async def decode() -> None:
        gate = BodyGate(wait_s=30, shared=False, timeout_s=60)
        CALLER.set(Principal("key-a", None, True))
        try:
            good, bad = Sender(raw), Sender(bad_raw)
            good.go.set()
            bad.go.set()
            assert await gate.texts(good.request()) == bodies._decode(raw)
            with pytest.raises(RequestValidationError) as e:
                await gate.texts(bad.request())
            (err,) = e.value.errors()
            assert err["loc"] == ("body", "documents", 0, "pages") and "input" not in err
            assert gate.decoder.pids()  # decoded by its workers
        finally:
            gate.close()

    asyncio.run(decode())
