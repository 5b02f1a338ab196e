"""A read-only key's reads write nothing to Neo4j: a real `terag serve` whose walk reads
CO_OCCURRENCE pairs, over a namespace whose pairs are kept lazily (built by the first walk that
needs them). With `KEY_A_READ` the retrieval is refused with one line saying what a writer must
run, and the namespace is as it was; a key that may write builds them; then the read-only key's
retrievals, explanations and graph reads leave every node and property as they found them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.service.paths import why_path
from tests.service.conftest import (
    KEY_A,
    KEY_A_READ,
    Service,
    running_service,
    service_env,
)
from tests.service.test_mcp import http_session, text_of

QUESTION = "Who designed the Volkswagen Beetle?"


@pytest.fixture(scope="module")
def pair_walk_service(
    base_settings: Settings, tenants: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    env = service_env(base_settings, *tenants)
    env["TERAG_RETRIEVAL"] = json.dumps({"walk_cooccurrence": True, "walk": "global"})
    log = tmp_path_factory.mktemp("serve-pairs") / "serve.log"
    with running_service(env, base_settings, tenants, log) as svc:
        yield svc


def snapshot(client: TeragClient, namespace: str) -> dict[str, Any]:
    """Every property of the namespace's nodes and relationships that a write could change."""
    with client.store.session() as s:
        rec = s.run(
            "MATCH (n:Namespace {name: $ns}) "
            "OPTIONAL MATCH (u:ProjectionUse {namespace: $ns}) "
            "RETURN properties(n) AS ns, u.at AS used, u.graph AS graph, "
            "COUNT { MATCH (:Concept {namespace: $ns})-[:CO_OCCURRENCE]->() } AS pairs, "
            "COUNT { MATCH (c:Concept {namespace: $ns}) WHERE c.embedding IS NOT NULL } AS vecs, "
            "COUNT { MATCH (p:Passage {namespace: $ns}) } AS passages, "
            "COUNT { MATCH (:Passage {namespace: $ns})<-[]-() } AS links",
            ns=namespace,
        ).single()
    assert rec is not None
    out = rec.data()
    out["ns"] = {k: str(v) for k, v in out["ns"].items()}  # its lock too: no writer took it
    out["used"] = str(out["used"])
    return out


@pytest.mark.asyncio
async def test_a_read_only_key_never_writes(pair_walk_service: Service) -> None:
    svc = pair_walk_service
    ns = svc.ns_a
    with TeragClient(svc.settings) as local:
        if local.stats(ns).cooccurrence != "lazy":
            local.store.cooccurrence.reset(ns)
        try:
            before = snapshot(local, ns)
            assert before["pairs"] == 0 and before["ns"]["cooccurrence"] == "lazy"
            with svc.client(KEY_A_READ) as http:
                r = http.post(f"/v1/namespaces/{ns}/retrieve", json={"question": QUESTION})
            assert r.status_code == 409, r.text
            err = r.json()["error"]
            assert err["type"] == "ReadNeedsWriter"
            message = err["message"]
            assert "\n" not in message and len(message) < 500
            assert "CO_OCCURRENCE" in message and "key that may write" in message
            async with http_session(svc, KEY_A_READ) as s:
                got = await s.call_tool("search", {"namespace": ns, "question": QUESTION})
                assert got.is_error and "CO_OCCURRENCE" in text_of(got), text_of(got)
            assert snapshot(local, ns) == before  # nothing written, not even the lock

            with svc.client(KEY_A) as http:  # a key that may write: builds the pairs
                r = http.post(f"/v1/namespaces/{ns}/retrieve", json={"question": QUESTION})
            assert r.status_code == 200, r.text
            built = snapshot(local, ns)
            assert built["pairs"] > 0 and built["ns"]["cooccurrence"] == "kept"

            with svc.client(KEY_A_READ) as http:
                for _ in range(2):
                    r = http.post(f"/v1/namespaces/{ns}/retrieve", json={"question": QUESTION})
                    assert r.status_code == 200, r.text
                top = r.json()["passages"][0]["id"]
                why = http.get(why_path(ns, top), params={"question": QUESTION})
                assert why.status_code == 200 and why.json()["rank"] == 1, why.text
                g = http.get(f"/v1/namespaces/{ns}/graph", params={"concept": "Wolfsburg"})
                assert g.status_code == 200, g.text
            async with http_session(svc, KEY_A_READ) as s:
                got = await s.call_tool("search", {"namespace": ns, "question": QUESTION})
                assert not got.is_error, text_of(got)
            assert snapshot(local, ns) == built
        finally:
            local.store.cooccurrence.reset(ns)  # as the other tests found it: lazy
