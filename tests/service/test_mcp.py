"""MCP with the SDK's own client: over streamable HTTP (the service's /mcp, behind the keys) and
over stdio (`terag mcp` as an agent starts it)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.service.conftest import KEY_A, KEY_A_READ, REPO, Service

pytestmark = pytest.mark.integration

TOOLS = {
    "list_namespaces",
    "search",
    "ask",
    "add_text",
    "ingest_status",
    "list_documents",
    "delete_document",
    "concept_neighbourhood",
    "why_retrieved",
}


@asynccontextmanager
async def http_session(service: Service, key: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http,
        streamable_http_client(f"{service.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.asyncio
async def test_http_tools_search_and_scope(service: Service) -> None:
    async with http_session(service, KEY_A) as s:
        tools = {t.name for t in (await s.list_tools()).tools}
        assert tools >= TOOLS
        listed = await s.call_tool("list_namespaces", {})
        assert not listed.is_error
        assert service.ns_a in text_of(listed) and service.ns_b not in text_of(listed)
        found = await s.call_tool(
            "search", {"namespace": service.ns_a, "question": "Who designed the Beetle?"}
        )
        assert not found.is_error, text_of(found)
        assert found.structured_content is not None
        passages = found.structured_content["passages"]
        assert passages and passages[0]["doc_id"]
        docs = await s.call_tool("list_documents", {"namespace": service.ns_a})
        assert docs.structured_content is not None and docs.structured_content["total"] >= 8
        g = await s.call_tool(
            "concept_neighbourhood", {"namespace": service.ns_a, "concept": "Wolfsburg"}
        )
        assert not g.is_error and g.structured_content is not None
        assert g.structured_content["nodes"]


@pytest.mark.asyncio
async def test_http_search_takes_a_mode_and_refuses_an_unknown_one(service: Service) -> None:
    """The flat baseline over MCP: the same passages as the client's flat mode, with RRF scores;
    a mode the tool does not know is an error, not a silent PageRank."""
    q = "Who designed the Beetle?"
    async with http_session(service, KEY_A) as s:
        flat = await s.call_tool(
            "search", {"namespace": service.ns_a, "question": q, "mode": "flat"}
        )
        assert not flat.is_error, text_of(flat)
        assert flat.structured_content is not None
        assert flat.structured_content["mode"] == "flat"
        assert flat.structured_content["score_kind"] == "rrf"
        walked = await s.call_tool("search", {"namespace": service.ns_a, "question": q})
        assert walked.structured_content is not None
        assert walked.structured_content["mode"] == "pagerank"
        bad = await s.call_tool(
            "search", {"namespace": service.ns_a, "question": q, "mode": "graph"}
        )
        assert bad.is_error and "mode" in text_of(bad)


# Multi-hop questions over the eight one-passage documents: the walk through the concepts
# reorders what the question's vector alone ranks
HOPS = [
    "In which state are the headquarters of the company that built the Beetle?",
    "Which city hosts the maker of the Porsche 911 and the Mercedes-Benz Museum?",
    "Where was the last original Beetle built, and who designed it?",
]


@pytest.mark.asyncio
async def test_http_search_dense_is_the_dense_ranking(service: Service) -> None:
    """`mode` reaches the retrieval: MCP dense gives what HTTP /retrieve dense gives (cosine
    scores), MCP pagerank what HTTP pagerank gives, and the two rankings differ."""
    differ = []
    with service.client(KEY_A) as http:
        async with http_session(service, KEY_A) as s:
            for q in HOPS:
                got: dict[str, list[tuple[str, float]]] = {}
                for mode in ("dense", "pagerank"):
                    found = await s.call_tool(
                        "search",
                        {"namespace": service.ns_a, "question": q, "top_k": 8, "mode": mode},
                    )
                    assert not found.is_error, text_of(found)
                    view = found.structured_content
                    assert view is not None and view["mode"] == mode
                    ranked = [(p["id"], p["score"]) for p in view["passages"]]
                    body = {"question": q, "top_k": 8, "mode": mode}
                    r = http.post(f"/v1/namespaces/{service.ns_a}/retrieve", json=body)
                    assert r.status_code == 200, r.text
                    assert [p["id"] for p in r.json()["passages"]] == [i for i, _ in ranked]
                    got[mode] = ranked
                    if mode == "dense":
                        assert view["score_kind"] == "cosine"
                        scores = [sc for _, sc in ranked]
                        assert scores == sorted(scores, reverse=True)
                        assert scores == pytest.approx([p["score"] for p in r.json()["passages"]])
                differ.append([i for i, _ in got["dense"]] != [i for i, _ in got["pagerank"]])
    assert any(differ), "dense and pagerank ranked every question alike"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("search", {"question": "What plays in Munich?"}),
        ("ask", {"question": "What plays in Munich?"}),
        ("add_text", {"document_id": "x", "text": "intruder"}),
        ("list_documents", {}),
        ("delete_document", {"document_id": "munich"}),
        ("concept_neighbourhood", {"concept": "Munich"}),
    ],
)
async def test_http_tool_on_another_tenants_namespace_is_forbidden(
    service: Service, tool: str, args: dict[str, Any]
) -> None:
    async with http_session(service, KEY_A) as s:
        res = await s.call_tool(tool, {"namespace": service.ns_b, **args})
    assert res.is_error
    assert "Forbidden" in text_of(res)
    assert "Glockenspiel" not in text_of(res)


@pytest.mark.asyncio
async def test_http_read_only_key_cannot_add(service: Service) -> None:
    async with http_session(service, KEY_A_READ) as s:
        res = await s.call_tool(
            "add_text", {"namespace": service.ns_a, "document_id": "x", "text": "y"}
        )
    assert res.is_error and "only read" in text_of(res)


def test_mcp_endpoint_needs_a_key(service: Service) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream"}
    r = httpx.post(f"{service.url}/mcp", json=body, headers=headers)
    assert r.status_code == 401 and r.json()["error"]["type"] == "Unauthorized"
    r = httpx.post(f"{service.url}/mcp", json=body, headers={**headers, "X-API-Key": "wrong-key"})
    assert r.status_code == 401


@pytest.mark.asyncio
async def test_stdio_session_scoped_by_its_key(service: Service) -> None:
    env = {**service.env, "TERAG_MCP_KEY": KEY_A}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "terag_neo4j.cli", "mcp"], env=env, cwd=str(REPO)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        assert {t.name for t in (await s.list_tools()).tools} >= TOOLS
        found = await s.call_tool(
            "search", {"namespace": service.ns_a, "question": "Where is Volkswagen based?"}
        )
        assert not found.is_error, text_of(found)
        assert found.structured_content is not None and found.structured_content["passages"]
        other = await s.call_tool("list_documents", {"namespace": service.ns_b})
        assert other.is_error and "Forbidden" in text_of(other)
