"""The local server manager against the real local server (skipped for NEO4J_URI / Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j import Driver

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


def _appended(path: Path, size: int) -> str:
    """What `path` gained past `size` bytes (all of it when it rotated meanwhile)."""
    if not path.is_file():
        return ""
    data = path.read_bytes()
    return (data[size:] if len(data) >= size else data).decode("utf-8", "replace")


def test_gds_calls_leave_no_progress_lines_in_the_logs(
    local_conn: Neo4jConn, neo4j_driver: Driver
) -> None:
    """A GDS call logged about 35 lines to each of neo4j.log and debug.log (its task progress);
    the managed server's log configuration keeps GDS to warnings, and everything else as
    Neo4j logs it."""
    logs = local.layout(Settings()).logs
    files = [logs / "neo4j.log", logs / "debug.log"]
    sizes = [f.stat().st_size if f.is_file() else 0 for f in files]
    label = "TeragLogProbe"
    with neo4j_driver.session(database=local_conn.database) as s:
        s.run(f"UNWIND range(1, 3) AS i CREATE (:{label} {{i: i}})").consume()
        try:
            s.run(
                f"MATCH (a:{label}), (b:{label}) WHERE b.i = a.i % 3 + 1 "
                "WITH gds.graph.project('terag_log_probe', a, b) AS g RETURN g.graphName"
            ).consume()
            rec = s.run(
                "CALL gds.pageRank.stats('terag_log_probe', {logProgress: true}) "
                "YIELD ranIterations RETURN ranIterations"
            ).single()
            assert rec is not None and rec["ranIterations"] >= 1
        finally:
            s.run("CALL gds.graph.drop('terag_log_probe', false) YIELD graphName").consume()
            s.run(f"MATCH (n:{label}) DETACH DELETE n").consume()
    written = [_appended(f, n) for f, n in zip(files, sizes, strict=True)]
    assert not any("PageRank ::" in w for w in written), "GDS progress reached the logs"
    # The logs still work: the projection's own summary is Neo4j's, at INFO.
    assert any("Graph aggregation" in w for w in written)
