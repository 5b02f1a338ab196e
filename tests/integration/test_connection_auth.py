"""NEO4J_URI without NEO4J_PASSWORD against a server that asks for one: one line saying to set
it, and the local server's password never sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.local import neo4j as local
from terag_neo4j.store import GraphStoreError
from tests.fixtures.neo4j import Neo4jConn

pytestmark = pytest.mark.integration


def test_neo4j_uri_without_a_password_is_refused_in_one_line(
    neo4j_conn: Neo4jConn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    settings = Settings(home=tmp_path, neo4j_uri=neo4j_conn.uri, neo4j_user=neo4j_conn.user)
    with pytest.raises(GraphStoreError) as refused:
        TeragClient(settings, namespace="unused")
    message = str(refused.value)
    assert "\n" not in message and "NEO4J_PASSWORD is unset" in message
    assert not local.layout(settings).password_file.exists()
