"""The neo4j-admin call that sets the initial password keeps it off the command line (no server
needed; the integration test checks a real first start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.local import neo4j as local
from terag_neo4j.local.neo4j_home import connection_target


def test_initial_password_command_names_a_file_not_the_password(tmp_path: Path) -> None:
    lay = local.layout(Settings(home=tmp_path))
    password = local.read_or_create_password(lay)
    cmd = local.initial_password_command("java", lay, tmp_path / "argfile")
    assert cmd[-2:] == ["set-initial-password", f"@{tmp_path / 'argfile'}"]
    assert not any(password in part for part in cmd)


@pytest.mark.parametrize(
    ("password", "line"),
    [
        ("plain", '"plain"'),
        ('a "b" c', '"a \\"b\\" c"'),
        ("back\\slash #x", '"back\\\\slash #x"'),
    ],
)
def test_atfile_quoting(password: str, line: str) -> None:
    assert local.atfile_quote(password) == line


def test_a_password_with_a_line_break_is_refused() -> None:
    with pytest.raises(local.ServerError, match="line break"):
        local.atfile_quote("a\nb")


def test_the_local_password_never_goes_to_the_server_at_neo4j_uri(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With NEO4J_URI set and NEO4J_PASSWORD unset, the managed local server's password
    (created on the spot when missing) must never be sent to that remote server."""
    for var in ("NEO4J_PASSWORD", "NEO4J_USER", "NEO4J_USERNAME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    lay = local.layout(Settings(home=tmp_path))
    remote = Settings(home=tmp_path, neo4j_uri="neo4j+s://db.example.com:7687")
    assert connection_target(remote) == ("neo4j+s://db.example.com:7687", "neo4j", None)
    assert not lay.password_file.exists(), "no local password is created for a remote server"
    secret = local.read_or_create_password(lay)
    uri, user, password = connection_target(remote)
    assert password is None and secret not in (uri, user)
    # The local server (NEO4J_URI unset) gets its own password; a set one wins everywhere.
    assert connection_target(Settings(home=tmp_path))[2] == secret
    given = Settings(home=tmp_path, neo4j_uri="bolt://db:7687", neo4j_password="theirs")
    assert connection_target(given) == ("bolt://db:7687", "neo4j", "theirs")


def test_settings_repr_leaves_the_password_out() -> None:
    """A Settings object in a log line or a test's traceback (pytest prints fixture values)
    must not carry the Neo4j password."""
    from terag_neo4j.config import Settings

    s = Settings(neo4j_password="s3cret-Value-42")
    assert s.neo4j_password == "s3cret-Value-42"
    assert "s3cret-Value-42" not in repr(s) and "s3cret-Value-42" not in str(s)


def test_the_store_alone_never_reaches_for_the_local_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store knows only NEO4J_URI: unset, it asks for a target instead of making the local
    server's password (the client decides and passes it)."""
    from terag_neo4j.store import GraphStore, GraphStoreError

    monkeypatch.delenv("NEO4J_URI", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    settings = Settings(home=tmp_path)
    with pytest.raises(GraphStoreError, match="NEO4J_URI is unset"):
        GraphStore.from_settings(settings)
    assert not local.layout(settings).password_file.exists()
