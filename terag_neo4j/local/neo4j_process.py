"""The local Neo4j process: start (provisioning first if needed), stop, status and logs.

The server runs in its own session in the background, its pid in ``run/neo4j.pid``; a start
waits until Bolt answers, a stop sends SIGTERM (Neo4j shuts down cleanly on it), then SIGKILL.
"""

from __future__ import annotations

import contextlib
import logging
import os
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
from terag_neo4j.local._process import pid_alive
from terag_neo4j.local.neo4j_config import JVM_OPTIONS, _heap_flag, write_conf
from terag_neo4j.local.neo4j_home import (
    USER,
    Layout,
    ServerError,
    connection,
    layout,
    load_pins,
)
from terag_neo4j.local.neo4j_provision import (
    find_java,
    is_provisioned,
    provision,
    vector_api_flags,
)

log = logging.getLogger(__name__)

MAIN_CLASS = "org.neo4j.server.Neo4jCommunity"
ADMIN_CLASS = "org.neo4j.server.startup.Neo4jAdminCommand"
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0


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
        *vector_api_flags(java),
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
