"""The front door as raw ASGI: what it refuses from headers alone (asserting that `receive` was
never awaited), the body counted as it streams in, the Host and Origin rules, rates, and the
per-key shares of admission. The app behind the door is a recording stub (these are unit tests
of the door's parsing and refusals); the real service is attacked in
tests/adversarial/test_front_door.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from terag_neo4j.service.admission import Admission
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.middleware import FrontDoor, Message
from terag_neo4j.service.policy import QUERY_BODY_BYTES, classify
from terag_neo4j.service.settings import KeyRing, ServiceConfigError, ServiceSettings, parse_keys

WIKI_WRITE = "wiki-writer-key-0123456789"
WIKI_READ = "wiki-reader-key-0123456789"
OTHER = "other-tenant-key-0123456789"
SLOW = "slow-rate-key-1-0123456789"
KEYS = {
    WIKI_WRITE: {"namespaces": ["wiki"], "access": "write"},
    WIKI_READ: {"namespaces": ["wiki"], "access": "read"},
    OTHER: {"namespaces": ["other"], "access": "write"},
    SLOW: {"namespaces": "*", "access": "read", "rate": 1},
}
MIB = 1024 * 1024


class Harness:
    """One request through a FrontDoor: the body it would stream, what `receive` handed out,
    what the stub app read and what went back to the client."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)
        self.received = 0  # times `receive` was awaited
        self.app_called = False
        self.app_body = b""
        self.sent: list[Message] = []

    async def receive(self) -> Message:
        self.received += 1
        if not self.chunks:
            return {"type": "http.disconnect"}
        chunk = self.chunks.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(self.chunks)}

    async def send(self, msg: Message) -> None:
        self.sent.append(msg)

    async def app(self, scope: Any, receive: Any, send: Any) -> None:
        """Reads the whole body as a route would, then answers 200."""
        self.app_called = True
        while True:
            msg = await receive()
            self.app_body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def error(self) -> dict[str, str]:
        err: dict[str, str] = json.loads(self.sent[1]["body"])["error"]
        return err

    @property
    def headers(self) -> dict[str, str]:
        return {k.decode(): v.decode() for k, v in self.sent[0]["headers"]}


def call(
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    chunks: list[bytes] | None = None,
    keys: dict[str, Any] | None = KEYS,
    service: ServiceSettings | None = None,
    door: FrontDoor | None = None,
) -> Harness:
    h = Harness(chunks or [])
    hdrs = {"host": "127.0.0.1:8000", **(headers or {})}
    if chunks is not None and "content-length" not in hdrs and "transfer-encoding" not in hdrs:
        hdrs["content-length"] = str(sum(map(len, chunks)))
    if door is None:
        ring = KeyRing(parse_keys(json.dumps(keys)) if keys else {})
        door = FrontDoor(h.app, service or ServiceSettings(), ring)
    else:
        door.app = h.app
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "scheme": "http",
        "headers": [(k.lower().encode(), v.encode()) for k, v in hdrs.items()],
    }
    asyncio.run(door(scope, h.receive, h.send))
    return h


def bearer(key: str, **more: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}", "content-type": "application/json", **more}


# ------------------------------------------------------------------ refused before the body


def test_no_key_is_401_before_a_byte_of_a_huge_body_is_received() -> None:
    h = call(
        "POST",
        "/v1/namespaces/wiki/documents",
        {"content-type": "application/json", "content-length": str(30 * MIB)},
        chunks=[b"[{}," * 1000],
    )
    assert h.status == 401 and h.headers["www-authenticate"] == "Bearer"
    assert h.received == 0 and not h.app_called


@pytest.mark.parametrize(
    ("key", "method", "path", "message"),
    [
        (OTHER, "POST", "/v1/namespaces/wiki/documents", "no access to namespace 'wiki'"),
        (OTHER, "POST", "/v1/namespaces/wiki/retrieve", "no access"),
        (OTHER, "DELETE", "/v1/namespaces/wiki/documents/a/b", "no access"),
        (WIKI_READ, "POST", "/v1/namespaces/wiki/documents", "may only read"),
        (WIKI_READ, "POST", "/v1/namespaces/wiki/documents/upload", "may only read"),
        (WIKI_READ, "DELETE", "/v1/namespaces/wiki", "may only read"),
    ],
)
def test_out_of_scope_key_is_403_before_the_body(
    key: str, method: str, path: str, message: str
) -> None:
    ctype = "multipart/form-data; boundary=x" if path.endswith("upload") else "application/json"
    h = call(
        method,
        path,
        {**bearer(key), "content-type": ctype, "content-length": str(20 * MIB)},
        chunks=[b"x" * 1024],
    )
    assert h.status == 403 and message in h.error["message"]
    assert h.received == 0 and not h.app_called


def test_read_key_may_post_a_question_and_the_route_reads_its_body() -> None:
    body = json.dumps({"question": "who?"}).encode()
    h = call("POST", "/v1/namespaces/wiki/retrieve", bearer(WIKI_READ), chunks=[body])
    assert h.status == 200 and h.app_body == body


def test_declared_length_over_the_routes_limit_is_413_before_the_body() -> None:
    big = str(QUERY_BODY_BYTES + 1)
    h = call("POST", "/v1/namespaces/wiki/ask", bearer(WIKI_READ, **{"content-length": big}))
    assert h.status == 413 and h.received == 0 and "65,536" in h.error["message"]
    # the same length is fine for documents, whose limit is TERAG_MAX_BODY_BYTES
    ok = call("POST", "/v1/namespaces/wiki/documents", bearer(WIKI_WRITE), chunks=[b"x" * 70_000])
    assert ok.status == 200


def test_a_streamed_body_is_refused_as_soon_as_it_passes_the_limit() -> None:
    chunk = b"x" * (16 * 1024)
    h = call(
        "POST",
        "/v1/namespaces/wiki/retrieve",
        bearer(WIKI_READ, **{"transfer-encoding": "chunked"}),
        chunks=[chunk] * 64,  # 1 MiB, chunked: no length up front
    )
    assert h.status == 413 and h.error["type"] == "PayloadTooLarge"
    # 64 KiB is four chunks: the fifth passes it, and nothing after it is read
    assert h.received == 5
    assert len(h.sent) == 2  # the app's own answer after its read failed is dropped


def test_wrong_content_type_is_415_and_a_bad_length_400() -> None:
    h = call("POST", "/v1/namespaces/wiki/retrieve", bearer(WIKI_READ, **{"content-type": "text/plain"}), chunks=[b"q"])  # fmt: skip
    assert h.status == 415 and h.received == 0
    h = call("POST", "/v1/namespaces/wiki/retrieve", bearer(WIKI_READ, **{"content-length": "x"}))
    assert h.status == 400 and h.received == 0


def test_public_routes_need_no_key_and_everything_else_does() -> None:
    assert call("GET", "/v1/health").status == 200
    assert call("GET", "/v1/ready").status == 200
    for path in ("/v1/jobs", "/v1/namespaces", "/mcp", "/anything"):
        assert call("GET", path).status == 401, path
    assert call("POST", "/mcp", {"content-length": str(100 * MIB)}).received == 0


def test_classify_reads_writes_and_limits() -> None:
    rule = classify("POST", "/v1/namespaces/wiki/retrieve", 32 * MIB)
    assert (rule.namespace, rule.write, rule.max_body) == ("wiki", False, QUERY_BODY_BYTES)
    rule = classify("POST", "/v1/namespaces/wiki/documents/upload", 32 * MIB)
    assert rule.write and rule.max_body == 32 * MIB and rule.content_type == "multipart/form-data"
    assert classify("GET", "/v1/namespaces/wiki/passages/a/b/why", 1).write is False
    assert classify("DELETE", "/v1/namespaces/wiki/documents/x", 1).write is True
    assert classify("PUT", "/v1/namespaces/wiki/ask", 1).write is True
    assert classify("GET", "/v1/ready", 1).public


# ------------------------------------------------------------------ browsers


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil"]
)
def test_foreign_host_is_refused_without_keys(host: str) -> None:
    h = call("GET", "/v1/namespaces", {"host": host}, keys=None)
    assert h.status == 400 and "TERAG_ALLOWED_HOSTS" in h.error["message"]
    assert not h.app_called


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000"])
def test_loopback_hosts_pass(host: str) -> None:
    assert call("GET", "/v1/namespaces", {"host": host}, keys=None).status == 200


def test_allowed_hosts_and_wildcard_binds() -> None:
    named = ServiceSettings(allowed_hosts=["svc.example", "other.example"])
    assert call("GET", "/v1/health", {"host": "svc.example:443"}, service=named).status == 200
    assert call("GET", "/v1/health", {"host": "evil.example"}, service=named).status == 400
    # bound to every address (keys required) it cannot know its names: any Host, unless named
    wild = ServiceSettings(host="0.0.0.0")
    assert call("GET", "/v1/health", {"host": "10.1.2.3:8000"}, service=wild).status == 200
    wild_named = ServiceSettings(host="0.0.0.0", allowed_hosts=["svc.example"])
    assert call("GET", "/v1/health", {"host": "10.1.2.3"}, service=wild_named).status == 400
    # a key is no way around the Host check
    assert call("GET", "/v1/namespaces", {**bearer(OTHER), "host": "evil.example"}).status == 400


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1:9999"},
        {"sec-fetch-site": "cross-site"},
    ],
)
def test_cross_site_writes_are_refused_without_keys(headers: dict[str, str]) -> None:
    h = call(
        "POST",
        "/v1/namespaces/wiki/documents/upload",
        {"content-type": "multipart/form-data; boundary=x", **headers},
        chunks=[b"--x--"],
        keys=None,
    )
    assert h.status == 403 and h.received == 0 and not h.app_called


def test_same_origin_and_cors_origins_may_write_and_anyone_may_read() -> None:
    own = {"origin": "http://127.0.0.1:8000", "content-type": "application/json"}
    assert call("POST", "/v1/namespaces", own, chunks=[b"{}"], keys=None).status == 200
    cors = ServiceSettings(cors_origins=["https://app.example"])
    allowed = {"origin": "https://app.example", "sec-fetch-site": "cross-site"}
    h = call("DELETE", "/v1/namespaces/wiki", allowed, keys=None, service=cors)
    assert h.status == 200
    # a cross-origin GET cannot change anything (and its reply is the browser's to withhold)
    assert call("GET", "/v1/namespaces", {"origin": "http://evil.example"}, keys=None).status == 200


# ------------------------------------------------------------------ rates and shares


def test_rate_limit_per_key_with_retry_after_and_the_keys_own_limit() -> None:
    ring = KeyRing(parse_keys(json.dumps(KEYS)))
    door = FrontDoor(lambda *a: None, ServiceSettings(rate_limit=3), ring)  # type: ignore[arg-type]
    path = "/v1/namespaces/wiki/retrieve"
    statuses = [call("POST", path, bearer(WIKI_READ), [b"{}"], door=door).status for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    h = call("POST", path, bearer(WIKI_READ), [b"{}"], door=door)
    assert h.status == 429 and int(h.headers["retry-after"]) >= 1
    assert "this key's limit: 3 per second" in h.error["message"] and h.received == 0
    # another key has its own bucket; SLOW's own rate (1/s) overrides the service's
    assert call("POST", path, bearer(WIKI_WRITE), [b"{}"], door=door).status == 200
    slow = [call("GET", "/v1/namespaces", bearer(SLOW), door=door) for _ in range(2)]
    assert [s.status for s in slow] == [200, 429]
    assert "this key's limit: 1 per second" in slow[1].error["message"]


def test_one_key_cannot_take_every_worker() -> None:
    release = threading.Event()

    async def main() -> tuple[list[object], float]:
        adm = Admission(running=2, waiting=4, timeout_s=5, shared=True)
        assert (adm.share_running, adm.share_limit) == (1, 3)
        flood = [asyncio.ensure_future(adm.run(lambda: release.wait(5), "a")) for _ in range(6)]
        await asyncio.sleep(0.05)
        # the other key runs at once, beside the flood's one running call
        loop = asyncio.get_running_loop()
        t = loop.time()
        quiet = await adm.run(lambda: "b done", "b")
        took = loop.time() - t
        release.set()
        out = await asyncio.gather(*flood, return_exceptions=True)
        adm.close()
        return [quiet, *out], took

    results, took = asyncio.run(main())
    assert results[0] == "b done" and took < 1
    refused = [r for r in results[1:] if isinstance(r, ServiceError)]
    assert len(refused) == 3 and all(r.status == 429 for r in refused)
    assert "this key's limit: 1 concurrent, 3 in all" in refused[0].message
    assert results[1:].count(True) == 3


def test_without_sharing_one_caller_may_use_every_worker() -> None:
    adm = Admission(running=4, waiting=8, timeout_s=1)
    assert (adm.share_running, adm.share_limit) == (4, 12)
    adm.close()


# ------------------------------------------------------------------ the key file


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "keys.json"
    f.write_text(json.dumps(KEYS))
    f.chmod(0o644)
    with pytest.raises(ServiceConfigError, match=f"run chmod 600 {f}"):
        parse_keys(str(f))
    f.chmod(0o600)
    assert len(parse_keys(str(f))) == len(KEYS)


# ------------------------------------------------------------------ readiness


def test_readiness_says_why_only_to_a_key_holder_and_never_where() -> None:
    """The real app, not started (its runtime never warms); the start-up error it would report
    is set by hand, as the start-up thread sets it when Neo4j refuses."""
    from fastapi.testclient import TestClient

    from terag_neo4j.service.app import create_app

    app = create_app(ServiceSettings(api_keys=json.dumps(KEYS)))
    app.state.runtime.startup_error = (
        "Neo4j at bolt://neo4j:s3cret@db.internal:7687 rejected user 'neo4j': check NEO4J_USER"
    )
    http = TestClient(app, base_url="http://127.0.0.1:8000")
    anonymous = http.get("/v1/ready")
    assert anonymous.status_code == 503
    assert anonymous.json()["ready"] is False and anonymous.json()["detail"] is None
    for leak in ("bolt", "db.internal", "'neo4j'", "s3cret"):
        assert leak not in anonymous.text
    # A key holder learns why, not where Neo4j lives: no 503 body names an internal address
    keyed = http.get("/v1/ready", headers={"X-API-Key": OTHER}).json()
    assert "rejected user" in keyed["detail"]
    for leak in ("bolt", "db.internal", "7687", "s3cret"):
        assert leak not in keyed["detail"]


def test_each_request_is_admitted_as_its_own_key() -> None:
    """Through the real app: the key the front door authenticated is the one admission counts
    (a stub client that lists no namespaces stands in for Neo4j)."""
    from fastapi.testclient import TestClient

    from terag_neo4j.service.app import create_app

    app = create_app(ServiceSettings(api_keys=json.dumps(KEYS)))
    rt = app.state.runtime
    assert (rt.admission.share_running, rt.admission.share_limit) == (2, 18)

    class NoNamespaces:
        def namespaces(self) -> list[object]:
            return []

    rt._client, rt.warm = NoNamespaces(), True
    seen: list[str] = []
    run = rt.admission.run

    async def recording(fn: Any, who: str = "") -> Any:
        seen.append(who)
        return await run(fn, who)

    rt.admission.run = recording
    http = TestClient(app, base_url="http://127.0.0.1:8000")
    for key in (WIKI_READ, OTHER, WIKI_READ):
        assert http.get("/v1/namespaces", headers={"X-API-Key": key}).json() == []
    ring = KeyRing(parse_keys(json.dumps(KEYS)))
    names = [p.name for p in (ring.lookup(WIKI_READ), ring.lookup(OTHER)) if p]
    assert seen == [names[0], names[1], names[0]]
