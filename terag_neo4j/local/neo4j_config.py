"""The local Neo4j's configuration: neo4j.conf rendered from Settings, its log configurations, and
the JVM options."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from terag_neo4j.config import Settings
from terag_neo4j.local.neo4j_home import Layout, ServerError

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

# Neo4j's default log configuration with GDS's progress lines at WARN: a PageRank logged about
# 35 lines to each of neo4j.log and debug.log (docs/operations.md, "Logs").
LOG_CONFIGS = Path(__file__).resolve().parents[1] / "data" / "neo4j"
# The neo4j.conf settings that name them, and their files (copied from LOG_CONFIGS to conf/)
LOG_SETTINGS = {"server.logs.config": "server-logs.xml", "server.logs.user.config": "user-logs.xml"}

# ---------------------------------------------------------------------------------- config


def render_conf(settings: Settings, lay: Layout) -> str:
    bolt, http = settings.neo4j_bolt_port, settings.neo4j_http_port
    lines = [
        "# Written by terag_neo4j.local.neo4j on every start; edit Settings, not this file.",
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
        *(f"{key}={lay.conf / name}" for key, name in LOG_SETTINGS.items()),
    ]
    return "\n".join(lines) + "\n"


def write_conf(settings: Settings, lay: Layout) -> Path:
    lay.conf.mkdir(parents=True, exist_ok=True)
    for name in LOG_SETTINGS.values():
        shutil.copyfile(LOG_CONFIGS / name, lay.conf / name)
    path = lay.conf / "neo4j.conf"
    path.write_text(render_conf(settings, lay), encoding="utf-8")
    return path


def _heap_flag(size: str) -> str:
    """Neo4j's '2g' / '512m' / '2GiB' as a JVM size."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgKMG])?(?:i?[bB])?\s*", size)
    if not m:
        raise ServerError(f"cannot read heap size {size!r}; use e.g. 2g or 512m")
    return m.group(1) + (m.group(2) or "").lower()
