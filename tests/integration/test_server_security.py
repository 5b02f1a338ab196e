"""The local server's secrets: a fresh server gets its password without it ever being
on a command line, listens on loopback only with auth on, and `terag server` output hides the
password unless asked. Also: the driver asks Neo4j for no notifications."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from terag_neo4j import cli
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.local import neo4j as local

pytestmark = pytest.mark.integration

# Characters that need quoting in an @-file and would be mangled by a shell.
PASSWORD = 'secret "pw" \\ with #hash'
# /proc/net/tcp{,6} spellings of 127.0.0.1, ::ffff:127.0.0.1 (a Java socket on 127.0.0.1) and ::1
LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _all_command_lines() -> list[str]:
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                out.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue
    return out


def _listen_addresses(port: int) -> set[str]:
    """Local addresses of LISTEN sockets on `port` (IPv4 and IPv6), from /proc/net."""
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            local_addr, state = line.split()[1], line.split()[3]
            addr, hex_port = local_addr.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                found.add(addr)
    return found


@pytest.fixture()
def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """A never-started server home that reuses the provisioned jars (no Maven)."""
    provisioned = local.provision(Settings())
    settings = Settings(
        home=tmp_path / "home",
        neo4j_bolt_port=_free_port(),
        neo4j_http_port=_free_port(),
        neo4j_heap="512m",
        neo4j_pagecache="64m",
        neo4j_password=PASSWORD,
    )
    lay = local.layout(settings)
    lay.root.mkdir(parents=True)
    for part in ("lib", "plugins"):
        (lay.root / part).symlink_to(provisioned.root / part)
    shutil.copy(provisioned.marker, lay.marker)
    env = {
        "TERAG_HOME": str(settings.home),
        "TERAG_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
        "TERAG_NEO4J_HTTP_PORT": str(settings.neo4j_http_port),
        "TERAG_NEO4J_HEAP": "512m",
        "TERAG_NEO4J_PAGECACHE": "64m",
        "NEO4J_PASSWORD": PASSWORD,
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("NEO4J_URI", raising=False)
    try:
        yield settings
    finally:
        local.stop(settings)


def test_fresh_server_password_never_on_a_command_line_loopback_only_auth_on(
    fresh_home: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[str] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.extend(c for c in _all_command_lines() if "org.neo4j" in c)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        assert cli.main(["server", "start"]) == 0
    finally:
        done.set()
        watcher.join(10)
    started = capsys.readouterr().out
    assert any("set-initial-password" in c for c in seen), "the watcher missed neo4j-admin"
    assert any(local.MAIN_CLASS in c for c in seen)
    assert not [c for c in seen if PASSWORD in c or "secret" in c]
    assert PASSWORD not in started and "--show-password" in started

    s = fresh_home
    uri = f"bolt://127.0.0.1:{s.neo4j_bolt_port}"
    assert local.bolt_answers(uri, "neo4j", PASSWORD)  # the @-file carried it intact
    with pytest.raises(AuthError):
        local.bolt_answers(uri, "neo4j", "wrong-password")
    with GraphDatabase.driver(uri, auth=None) as anonymous, pytest.raises(AuthError):
        anonymous.verify_connectivity()
    for port in (s.neo4j_bolt_port, s.neo4j_http_port):
        # Bolt answering is what `server start` waits for; on a loaded machine the HTTP
        # connector can open a few seconds later.
        deadline = time.monotonic() + 60
        while not (addresses := _listen_addresses(port)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert addresses and addresses <= LOOPBACK, f"port {port} listens on {addresses}"
    assert not list(local.layout(s).run.glob(".initial-password-*"))  # the @-file is gone

    assert cli.main(["server", "status"]) == 0
    assert cli.main(["server", "status", "--json"]) == 0
    out = capsys.readouterr().out
    assert PASSWORD not in out and "password" not in json.loads(out[out.index("{") :])
    assert cli.main(["server", "status", "--show-password"]) == 0
    assert PASSWORD in capsys.readouterr().out


def test_driver_asks_for_no_notifications(spacy_client: TeragClient) -> None:
    """A fresh namespace queried for labels and keys that do not exist yet: no warnings."""
    with spacy_client.store.session() as session:
        summary = session.run(
            "MATCH (n:NoSuchLabelTerag11) RETURN n.no_such_key_terag11 AS x"
        ).consume()
    notes = [s.gql_status for s in summary.gql_status_objects if s.is_notification]
    assert notes == []


def test_no_process_shows_the_session_server_password(spacy_client: TeragClient) -> None:
    password = spacy_client.settings.neo4j_password or ""
    assert password and not [c for c in _all_command_lines() if password in c]
