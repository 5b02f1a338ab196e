"""A local Neo4j Community + GDS server for machines without Docker (CI included).

This module is the server manager's public face; the work is done one concern per module:
:mod:`~terag_neo4j.local.neo4j_home` (pins, folder layout, password, connection),
:mod:`~terag_neo4j.local.neo4j_provision` (Java, Maven, the jars),
:mod:`~terag_neo4j.local.neo4j_config` (neo4j.conf, JVM options) and
:mod:`~terag_neo4j.local.neo4j_process` (start, stop, status, logs). The versions are pinned in
:mod:`terag_neo4j.core.versions`.
"""

from terag_neo4j.local.neo4j_config import JVM_OPTIONS, render_conf, write_conf
from terag_neo4j.local.neo4j_home import (
    MARKER,
    MIN_GDS,
    PID_FILE,
    USER,
    Layout,
    Pins,
    ServerError,
    connection,
    layout,
    load_pins,
    read_or_create_password,
    version_tuple,
)
from terag_neo4j.local.neo4j_process import (
    ADMIN_CLASS,
    MAIN_CLASS,
    START_TIMEOUT_S,
    STOP_TIMEOUT_S,
    ServerInfo,
    ServerStatus,
    atfile_quote,
    bolt_answers,
    initial_password_command,
    logs,
    port_in_use,
    start,
    status,
    stop,
)
from terag_neo4j.local.neo4j_provision import (
    MIN_JAVA,
    PROVISION_TIMEOUT_S,
    find_java,
    find_maven,
    is_provisioned,
    java_version,
    parse_java_major,
    provision,
    render_pom,
)

__all__ = [
    "ADMIN_CLASS",
    "JVM_OPTIONS",
    "MAIN_CLASS",
    "MARKER",
    "MIN_GDS",
    "MIN_JAVA",
    "PID_FILE",
    "PROVISION_TIMEOUT_S",
    "START_TIMEOUT_S",
    "STOP_TIMEOUT_S",
    "USER",
    "Layout",
    "Pins",
    "ServerError",
    "ServerInfo",
    "ServerStatus",
    "atfile_quote",
    "bolt_answers",
    "connection",
    "find_java",
    "find_maven",
    "initial_password_command",
    "is_provisioned",
    "java_version",
    "layout",
    "load_pins",
    "logs",
    "parse_java_major",
    "port_in_use",
    "provision",
    "read_or_create_password",
    "render_conf",
    "render_pom",
    "start",
    "status",
    "stop",
    "version_tuple",
    "write_conf",
]
