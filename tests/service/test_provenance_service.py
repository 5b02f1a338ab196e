"""Provenance through the service: the HTTP retrieve route, the MCP search tool and the
`TeragRemote` client each return every passage with its file, headings and characters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from terag_neo4j.service.remote_client import TeragRemote
from tests.integration.conftest import SAMPLE
from tests.service.conftest import KEY_A, KEY_A_READ, Service
from tests.service.test_mcp import http_session, text_of

pytestmark = pytest.mark.integration

QUESTION = "Who designed the Volkswagen Beetle?"


def check(prov: dict[str, Any]) -> None:
    """A sample passage's provenance: a Markdown file of the sample folder, its span."""
    assert prov["source"] and Path(prov["source"]).parent == SAMPLE.resolve(), prov
    assert prov["char_start"] is not None and prov["char_end"] > prov["char_start"], prov
    assert prov["page_start"] is None and isinstance(prov["heading_path"], list), prov


def test_http_retrieve_passages_carry_provenance(service: Service) -> None:
    with service.client(KEY_A_READ) as http:
        r = http.post(
            f"/v1/namespaces/{service.ns_a}/retrieve", json={"question": QUESTION, "top_k": 4}
        )
    assert r.status_code == 200, r.text
    passages = r.json()["passages"]
    assert len(passages) == 4
    for p in passages:
        check(p["provenance"])
        text = Path(p["provenance"]["source"]).read_text(encoding="utf-8")
        span = text[p["provenance"]["char_start"] : p["provenance"]["char_end"]]
        assert p["text"].split()[0] in span


@pytest.mark.asyncio
async def test_mcp_search_passages_carry_provenance(service: Service) -> None:
    async with http_session(service, KEY_A) as s:
        found = await s.call_tool("search", {"namespace": service.ns_a, "question": QUESTION})
        assert not found.is_error, text_of(found)
        assert found.structured_content is not None
        passages = found.structured_content["passages"]
        assert passages
        for p in passages:
            check(p["provenance"])


def test_remote_client_passages_carry_provenance(service: Service) -> None:
    with TeragRemote(service.url, api_key=KEY_A_READ, namespace=service.ns_a) as terag:
        res = terag.retrieve(QUESTION, top_k=3)
    assert len(res.passages) == 3
    for p in res.passages:
        check(p.provenance.model_dump())
