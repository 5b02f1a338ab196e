"""Keys scoped to namespaces: a key for A gets 403 on every route of B, never B's data."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.service.conftest import KEY_A, KEY_A_READ, KEY_B, Service

pytestmark = pytest.mark.integration

RETRIEVE = {"question": "What plays in Munich?", "top_k": 2}

# (method, path under the namespace, request keyword arguments)
ROUTES: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "", {}),
    ("DELETE", "", {}),
    ("GET", "/documents", {}),
    ("POST", "/documents", {"json": {"documents": [{"id": "x", "text": "intruder"}]}}),
    ("POST", "/documents/upload", {"files": [("files", ("x.txt", b"intruder", "text/plain"))]}),
    ("DELETE", "/documents/munich", {}),
    ("POST", "/retrieve", {"json": RETRIEVE}),
    ("POST", "/ask", {"json": RETRIEVE}),
    ("POST", "/ask", {"json": {**RETRIEVE, "stream": True}}),
    ("GET", "/graph", {"params": {"concept": "Munich"}}),
]
IDS = [f"{m} {p or '/'}{' stream' if 'stream' in str(kw) else ''}" for m, p, kw in ROUTES]


@pytest.mark.parametrize(("method", "tail", "kw"), ROUTES, ids=IDS)
def test_key_for_a_gets_403_on_every_route_of_b(
    service: Service, method: str, tail: str, kw: dict[str, Any]
) -> None:
    with service.client(KEY_A) as http:
        r = http.request(method, f"/v1/namespaces/{service.ns_b}{tail}", **kw)
    assert r.status_code == 403, r.text
    assert r.json()["error"]["type"] == "Forbidden"
    assert "Glockenspiel" not in r.text
    # and B is untouched: its one document is still there
    with service.client(KEY_B) as http:
        docs = http.get(f"/v1/namespaces/{service.ns_b}/documents").json()["documents"]
    assert [d["id"] for d in docs] == ["munich"]


@pytest.mark.parametrize(("method", "tail", "kw"), ROUTES, ids=IDS)
def test_no_key_gets_401_on_every_route(
    service: Service, method: str, tail: str, kw: dict[str, Any]
) -> None:
    with service.client(key=None) as http:
        r = http.request(method, f"/v1/namespaces/{service.ns_a}{tail}", **kw)
    assert r.status_code == 401
    assert r.json()["error"]["type"] == "Unauthorized"
    assert r.headers["www-authenticate"] == "Bearer"


def test_wrong_key_is_401_and_an_unknown_namespace_of_another_tenant_is_403(
    service: Service,
) -> None:
    with service.client("not-a-key-at-all") as http:
        assert http.get("/v1/namespaces").status_code == 401
    with service.client(KEY_A) as http:
        # Not 404: a key cannot probe which namespaces exist outside its scope
        assert http.get("/v1/namespaces/no-such-namespace-here").status_code == 403


def test_listing_shows_only_the_keys_namespaces(service: Service) -> None:
    with service.client(KEY_A) as http:
        names = [n["name"] for n in http.get("/v1/namespaces").json()]
    assert names == [service.ns_a]
    with service.client(KEY_B) as http:
        names = [n["name"] for n in http.get("/v1/namespaces").json()]
    assert names == [service.ns_b]


@pytest.mark.parametrize(
    ("method", "tail", "kw"),
    [r for r in ROUTES if r[0] != "GET" and r[1] not in ("/retrieve", "/ask")],
)
def test_read_only_key_cannot_write(
    service: Service, method: str, tail: str, kw: dict[str, Any]
) -> None:
    with service.client(KEY_A_READ) as http:
        r = http.request(method, f"/v1/namespaces/{service.ns_a}{tail}", **kw)
        assert r.status_code == 403
        assert "only read" in r.json()["error"]["message"]
        # while reading works
        assert (
            http.post(f"/v1/namespaces/{service.ns_a}/retrieve", json=RETRIEVE).status_code == 200
        )


def test_create_and_jobs_are_scoped_too(service: Service) -> None:
    with service.client(KEY_A) as http:
        assert http.post("/v1/namespaces", json={"name": service.ns_b}).status_code == 403
    with service.client(KEY_B) as http:
        job = http.post(
            f"/v1/namespaces/{service.ns_b}/documents",
            json={
                "documents": [
                    {
                        "id": "munich",
                        "text": "The Glockenspiel of Munich's town hall plays twice a day.",
                    }
                ]
            },
        ).json()
    with service.client(KEY_A) as http:
        # Another tenant's job is answered as an unknown one: neither it nor its namespace is told
        unknown = http.get("/v1/jobs/0123456789abcdef")
        for r in (http.get(f"/v1/jobs/{job['id']}"), http.delete(f"/v1/jobs/{job['id']}")):
            assert r.status_code == 404
            assert service.ns_b not in r.text
            assert r.json()["error"]["message"] == unknown.json()["error"]["message"].replace(
                "0123456789abcdef", job["id"]
            )
        assert job["id"] not in [j["id"] for j in http.get("/v1/jobs").json()]
    with service.client(KEY_B) as http:  # its own key still cancels it
        assert http.delete(f"/v1/jobs/{job['id']}").status_code == 202


def test_keys_never_appear_in_the_openapi_schema_or_errors(service: Service) -> None:
    with httpx.Client(base_url=service.url) as http:
        text = http.get("/openapi.json").text
        err = http.get("/v1/namespaces", headers={"X-API-Key": KEY_A + "x"}).text
    for key in (KEY_A, KEY_B, KEY_A_READ):
        assert key not in text and key not in err
