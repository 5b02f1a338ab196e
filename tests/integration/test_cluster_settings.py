"""Settings for a cluster or Aura, tried on the local stand-in: a routing `neo4j://` URI and
database selection (the local server is Community edition: `neo4j` is its only database)."""

from __future__ import annotations

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.store import GraphStoreError

from .conftest import SAMPLE

pytestmark = pytest.mark.integration


def _routing(settings: Settings) -> Settings:
    uri = str(settings.neo4j_uri)
    assert uri.startswith("bolt://"), uri
    return settings.with_overrides(neo4j_uri="neo4j://" + uri.removeprefix("bolt://"))


def test_a_routing_uri_indexes_and_walks_the_graph(base_settings: Settings, namespace: str) -> None:
    with TeragClient(_routing(base_settings), namespace=namespace) as client:
        report = client.index([SAMPLE], progress=False)
        assert report.passages_new > 0
        res = client.retrieve("Who designed the Volkswagen Beetle?", top_k=3)
        assert res.mode == "pagerank"
        assert res.passages[0].id.endswith("beetle.md")


def test_a_database_that_does_not_exist_is_named_in_one_line(base_settings: Settings) -> None:
    st = _routing(base_settings).with_overrides(neo4j_database="nosuchdb", namespace="x")
    with TeragClient(st) as client, pytest.raises(GraphStoreError, match="NEO4J_DATABASE"):
        client.retrieve("Who designed the Volkswagen Beetle?")
