"""Bad input gets a clear JSON error with the right status, in one shape, and writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.service.conftest import Service

pytestmark = pytest.mark.integration


def _cases(ns: str) -> list[tuple[str, str, str, dict[str, Any], int]]:
    base = f"/v1/namespaces/{ns}"
    retrieve = f"{base}/retrieve"
    return [
        ("empty body", "POST", retrieve, {"headers": {"content-type": "application/json"}}, 422),
        ("no body at all", "POST", retrieve, {}, 422),
        (
            "wrong content type",
            "POST",
            retrieve,
            {"content": b"q=x", "headers": {"content-type": "text/plain"}},
            415,
        ),
        (
            "invalid JSON",
            "POST",
            retrieve,
            {"content": b"{bad", "headers": {"content-type": "application/json"}},
            422,
        ),
        ("top_k zero", "POST", retrieve, {"json": {"question": "x", "top_k": 0}}, 422),
        ("top_k huge", "POST", retrieve, {"json": {"question": "x", "top_k": 10**9}}, 422),
        ("top_k not a number", "POST", retrieve, {"json": {"question": "x", "top_k": "five"}}, 422),
        ("empty question", "POST", retrieve, {"json": {"question": ""}}, 422),
        ("blank question", "POST", retrieve, {"json": {"question": "   "}}, 422),
        ("10k-character question", "POST", retrieve, {"json": {"question": "a" * 10_000}}, 422),
        # past the 64 KiB a question's body may take: refused as it arrives
        ("100k-character question", "POST", retrieve, {"json": {"question": "a" * 100_000}}, 413),
        ("unknown field", "POST", retrieve, {"json": {"question": "x", "topk": 3}}, 422),
        (
            "unknown namespace",
            "POST",
            "/v1/namespaces/no-such-ns-zz/retrieve",
            {"json": {"question": "x"}},
            404,
        ),
        (
            "invalid namespace name",
            "POST",
            "/v1/namespaces/bad%20name/retrieve",
            {"json": {"question": "x"}},
            422,
        ),
        ("unknown document", "DELETE", f"{base}/documents/no-such-doc", {}, 404),
        ("unknown job", "GET", "/v1/jobs/nope", {}, 404),
        ("unknown route", "GET", "/v1/nothing-here", {}, 404),
        ("unknown concept", "GET", f"{base}/graph", {"params": {"concept": "Zzyzx"}}, 404),
        ("graph depth 9", "GET", f"{base}/graph", {"params": {"concept": "x", "depth": 9}}, 422),
        (
            "binary upload",
            "POST",
            f"{base}/documents/upload",
            {"files": [("files", ("x.txt", bytes(range(256)), "text/plain"))]},
            415,
        ),
        (
            "latin-1 upload",
            "POST",
            f"{base}/documents/upload",
            {"files": [("files", ("x.txt", "Müller".encode("latin-1"), "text/plain"))]},
            415,
        ),
        (
            "unsupported file type",
            "POST",
            f"{base}/documents/upload",
            {"files": [("files", ("x.pdf", b"%PDF-1.4", "application/pdf"))]},
            415,
        ),
        (
            "upload without multipart",
            "POST",
            f"{base}/documents/upload",
            {"json": {"files": []}},
            415,
        ),
        ("no documents", "POST", f"{base}/documents", {"json": {"documents": []}}, 422),
        (
            "document without text",
            "POST",
            f"{base}/documents",
            {"json": {"documents": [{"id": "x", "text": ""}]}},
            422,
        ),
        (
            "duplicate ids",
            "POST",
            f"{base}/documents",
            {"json": {"documents": [{"id": "x", "text": "a"}, {"id": "x", "text": "b"}]}},
            422,
        ),
        (
            "body over the limit",
            "POST",
            f"{base}/documents",
            {
                "content": b"{" + b" " * (33 * 1024 * 1024) + b"}",
                "headers": {"content-type": "application/json"},
            },
            413,
        ),
    ]


CASE_NAMES = [c[0] for c in _cases("x")]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_bad_input_gets_the_right_status_in_one_shape(service: Service, name: str) -> None:
    _, method, path, kw, status = next(c for c in _cases(service.ns_a) if c[0] == name)
    with service.client() as http:
        before = http.get(f"/v1/namespaces/{service.ns_a}").json()
        r = http.request(method, path, **kw)
        assert r.status_code == status, r.text
        err = r.json()["error"]
        assert set(err) == {"type", "message"} and err["message"]
        after = http.get(f"/v1/namespaces/{service.ns_a}").json()
    assert after["version"] == before["version"]  # nothing was written
    assert after["passages"] == before["passages"]


def test_not_found_does_not_list_other_namespaces(service: Service) -> None:
    with service.client() as http:
        r = http.post("/v1/namespaces/no-such-ns-zz/retrieve", json={"question": "x"})
    assert r.status_code == 404
    assert service.ns_b not in r.text and "known" not in r.text


def test_chunked_body_over_the_limit_is_413(service: Service) -> None:
    def chunks() -> Any:
        for _ in range(40):
            yield b" " * (1024 * 1024)

    with service.client() as http:
        r = http.post(
            f"/v1/namespaces/{service.ns_a}/retrieve",
            content=chunks(),
            headers={"content-type": "application/json"},
        )
    assert r.status_code == 413
