"""The reranker through the service: a `terag serve` with TERAG_RERANKER set to the tiny
cross-encoder made here reranks HTTP /retrieve, the MCP search tool and TeragRemote's
retrieve, and each takes `rerank` to skip it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.service.remote_client import TeragRemote
from tests.fixtures.tiny_models import TinyModels

from .conftest import KEY_A, Service, running_service, service_env
from .test_mcp import http_session

pytestmark = pytest.mark.integration
QUESTION = "Who designed the Beetle?"


@pytest.fixture(scope="module")
def reranking(
    base_settings: Settings,
    tenants: tuple[str, str],
    tiny_models: TinyModels,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Service]:
    env = service_env(base_settings, *tenants)
    env.update(TERAG_RERANKER=f"st:{tiny_models.cross_encoder}", TERAG_RERANK_TOP="6")
    log = tmp_path_factory.mktemp("serve-rerank") / "serve.log"
    with running_service(env, base_settings, tenants, log) as svc:
        yield svc


def test_http_retrieve_is_reranked_unless_asked_not_to(
    reranking: Service, tiny_models: TinyModels
) -> None:
    path = f"/v1/namespaces/{reranking.ns_a}/retrieve"
    with reranking.client(KEY_A) as http:
        on = http.post(path, json={"question": QUESTION, "top_k": 3})
        off = http.post(path, json={"question": QUESTION, "top_k": 3, "rerank": False})
    assert on.status_code == 200 and off.status_code == 200, on.text + off.text
    got, plain = on.json(), off.json()
    assert got["score_kind"] == "rerank" and got["reranker"] == str(tiny_models.cross_encoder)
    assert "rerank" in got["timings"] and len(got["passages"]) == 3
    assert plain["score_kind"] != "rerank" and "rerank" not in plain["timings"]

    with TeragRemote(reranking.url, api_key=KEY_A) as remote:
        assert remote.retrieve(QUESTION, 3, reranking.ns_a).score_kind == "rerank"
        assert remote.retrieve(QUESTION, 3, reranking.ns_a, rerank=False).score_kind != "rerank"


def test_rerank_asked_of_a_service_without_a_reranker_is_the_callers_error(
    service: Service,
) -> None:
    path = f"/v1/namespaces/{service.ns_a}/retrieve"
    with service.client(KEY_A) as http:
        r = http.post(path, json={"question": QUESTION, "rerank": True})
    assert r.status_code == 422, r.text
    assert "TERAG_RERANKER" in r.json()["error"]["message"]


@pytest.mark.asyncio
async def test_mcp_search_takes_rerank(reranking: Service) -> None:
    async with http_session(reranking, KEY_A) as s:
        args = {"namespace": reranking.ns_a, "question": QUESTION, "top_k": 3}
        on = await s.call_tool("search", args)
        off = await s.call_tool("search", {**args, "rerank": False})
    assert on.structured_content is not None and off.structured_content is not None
    assert on.structured_content["score_kind"] == "rerank"
    assert off.structured_content["score_kind"] != "rerank"
