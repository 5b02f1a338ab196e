"""The version pins of terag_neo4j/core/versions.py: consistent, new enough, and the ones
docker-compose.yml uses (the compose file is only checked here, never read at run time)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from terag_neo4j.core import versions
from terag_neo4j.local import neo4j as local
from terag_neo4j.local import ollama

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


def compose() -> Any:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def test_the_local_servers_use_the_pins() -> None:
    pins = local.load_pins()
    assert (pins.neo4j, pins.gds, pins.browser) == (
        versions.NEO4J,
        versions.GDS,
        versions.NEO4J_BROWSER,
    )
    pom = local.render_pom(pins)
    assert f"<version>{versions.MAVEN_DEPENDENCY_PLUGIN}</version>" in pom
    assert f"v{versions.OLLAMA}" == ollama.OLLAMA_VERSION


def test_images_use_the_pinned_versions() -> None:
    services = compose()["services"]
    assert services["neo4j"]["image"] == f"neo4j:{versions.NEO4J}"
    assert services["ollama"]["image"] == f"ollama/ollama:{versions.OLLAMA}"


def test_no_other_version_block_in_the_compose_file() -> None:
    # One place for each pin: the compose file holds image tags only.
    assert not [k for k in compose() if str(k).startswith("x-")]


def test_gds_is_at_least_2_17() -> None:
    # 2.17 is the first GDS whose pageRank takes weighted sourceNodes [[node, bias], ...].
    assert local.version_tuple(versions.GDS)[:2] >= local.MIN_GDS


def test_neo4j_and_gds_are_a_supported_pair() -> None:
    # GDS 2.26 supports Neo4j 2026.01 only (one GDS minor per Neo4j minor since GDS 2.14).
    supported: dict[tuple[int, ...], tuple[int, ...]] = {(2, 26): (2026, 1)}
    gds_minor = local.version_tuple(versions.GDS)[:2]
    assert supported[gds_minor] == local.version_tuple(versions.NEO4J)[:2]


def test_server_modules_do_not_need_pyyaml() -> None:
    # PyYAML is a test dependency only: the server manager and the CLI must not import it.
    code = (
        "import sys, terag_neo4j.cli, terag_neo4j.local.neo4j, terag_neo4j.local.ollama; "
        "terag_neo4j.local.neo4j.load_pins(); print('yaml' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"
