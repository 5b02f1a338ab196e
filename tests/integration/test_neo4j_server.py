"""The local server manager against the real local server (skipped for NEO4J_URI / Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.local import neo4j as local
from tests.fixtures.neo4j import Neo4jConn

pytestmark = pytest.mark.integration


@pytest.fixture()
def local_conn(neo4j_conn: Neo4jConn) -> Neo4jConn:
    if neo4j_conn.source != "local":
        pytest.skip("the session uses a server the local manager does not run")
    return neo4j_conn


def test_status_reports_the_running_server(local_conn: Neo4jConn) -> None:
    st = local.status(Settings())
    assert st.running and st.bolt_ok and st.provisioned
    assert (st.uri, st.user, st.password) == (local_conn.uri, local_conn.user, local_conn.password)
    assert local.connection(Settings()) == (st.uri, st.user, st.password)


def test_second_start_downloads_nothing(
    local_conn: Neo4jConn, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With Maven off PATH, provisioning and start must still succeed from the marker file."""
    monkeypatch.setenv("PATH", str(tmp_path))
    lay = local.provision(Settings())
    assert lay.marker.is_file() and any(lay.plugins.glob("proc-2.*.jar"))
    assert any(lay.plugins.glob("opengds-extension-2.*.jar"))
    info = local.start(Settings())
    assert info.started is False and info.uri == local_conn.uri


def test_password_file_is_private(local_conn: Neo4jConn) -> None:
    lay = local.layout(Settings())
    if Settings().neo4j_password is None:
        assert lay.password_file.read_text().strip() == local_conn.password
    assert lay.password_file.stat().st_mode & 0o077 == 0
