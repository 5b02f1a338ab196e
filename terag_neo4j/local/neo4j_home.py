"""The home of the local Neo4j server: pinned versions, the folder layout, the password and the
connection clients use.

Layout of the server home (``settings.home/neo4j/<version>/``)::

    lib/       Neo4j, Browser and third-party jars (Maven resolves version conflicts once)
    plugins/   the org.neo4j.gds jars (scanned for procedures and extensions)
    conf/      neo4j.conf (from Settings) and the two log configurations, written on every start
    data/ logs/ run/   database files, logs, the pid file
    password   the generated password of user ``neo4j`` (mode 0600)
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from terag_neo4j.config import Settings
from terag_neo4j.core import versions
from terag_neo4j.errors import TeragError

MIN_GDS = (2, 17)
USER = "neo4j"
MARKER = ".provisioned.json"
PID_FILE = "neo4j.pid"


class ServerError(TeragError, RuntimeError):
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


def connection_target(settings: Settings) -> tuple[str, str, str | None]:
    """(uri, user, password) of the Neo4j at NEO4J_URI, or of the local managed server when it
    is unset. The local server's generated password goes to the local server only: with
    NEO4J_URI set and NEO4J_PASSWORD unset there is no password (a server without auth)."""
    if settings.neo4j_uri is None:
        return connection(settings)
    return settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password
