"""Why a passage was retrieved: over HTTP and MCP, against the real service."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.service.conftest import KEY_A_READ, KEY_B, Service
from tests.service.test_mcp import http_session, text_of

pytestmark = pytest.mark.integration

QUESTION = "Who designed the Volkswagen Beetle?"


def why_url(service: Service, passage: str) -> str:
    return f"/v1/namespaces/{service.ns_a}/passages/{quote(passage, safe='')}/why"


def top_passage(service: Service) -> str:
    with service.client() as http:
        r = http.post(f"/v1/namespaces/{service.ns_a}/retrieve", json={"question": QUESTION})
    assert r.status_code == 200, r.text
    return str(r.json()["passages"][0]["id"])


def test_the_top_passage_is_rank_one_with_its_reasons(service: Service) -> None:
    top = top_passage(service)
    with service.client(KEY_A_READ) as http:
        r = http.get(why_url(service, top), params={"question": QUESTION})
    assert r.status_code == 200, r.text
    w = r.json()
    assert w["rank"] == 1 and w["score"] > 0 and w["passage_id"] == top
    assert w["concepts"] or w["seed_weight"] > 0
    for c in w["concepts"]:
        assert c["name"] and c["frequency"] >= 1


def test_another_namespaces_key_is_forbidden(service: Service) -> None:
    with service.client(KEY_B) as http:
        r = http.get(why_url(service, "anything"), params={"question": QUESTION})
    assert r.status_code == 403, r.text


def test_an_unknown_passage_is_404(service: Service) -> None:
    with service.client(KEY_A_READ) as http:
        r = http.get(why_url(service, "no-such-passage"), params={"question": QUESTION})
    assert r.status_code == 404, r.text
    assert r.json()["error"]["type"]


@pytest.mark.asyncio
async def test_mcp_why_retrieved(service: Service) -> None:
    top = top_passage(service)
    async with http_session(service, KEY_A_READ) as s:
        got = await s.call_tool(
            "why_retrieved", {"namespace": service.ns_a, "passage_id": top, "question": QUESTION}
        )
        assert not got.is_error, text_of(got)
        assert got.structured_content is not None and got.structured_content["rank"] == 1
        other = await s.call_tool(
            "why_retrieved", {"namespace": service.ns_b, "passage_id": top, "question": QUESTION}
        )
        assert other.is_error
