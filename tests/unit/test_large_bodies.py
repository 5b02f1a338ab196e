"""Large JSON bodies wait for a slot of their own before a byte is read (unit test of the
admission of bodies: real Starlette requests, whose `receive` is a stand-in that hands out the
body and counts its calls)."""

from __future__ import annotations

import asyncio
import json

import pytest
from fastapi.exceptions import RequestValidationError
from starlette.requests import Request

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
        gate = BodyGate(wait_s=30, shared=True)
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
        assert all(len(r.documents[0].text) == LARGE_BODY_BYTES + 10 for r in done)
        gate.close()

    asyncio.run(flood())


def test_a_small_body_is_decoded_at_once_and_errors_are_one_validation_error() -> None:
    async def small() -> None:
        gate = BodyGate(wait_s=30, shared=True)
        ok = Sender(b'{"documents": [{"id": "a", "text": "Alpha.", "pages": [0, 3]}]}')
        ok.go.set()
        assert (await gate.texts(ok.request())).documents[0].pages == [0, 3]
        bad = Sender(b'{"documents": [{"id": "a", "text": "Alpha.", "pages": [3, 3]}]}')
        bad.go.set()
        with pytest.raises(RequestValidationError) as e:
            await gate.texts(bad.request())
        (err,) = e.value.errors()
        assert err["loc"] == ("body", "documents", 0, "pages") and "input" not in err
        gate.close()

    asyncio.run(small())
