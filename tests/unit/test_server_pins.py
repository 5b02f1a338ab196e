"""The version pins in docker-compose.yml (x-terag) are consistent and new enough."""

from __future__ import annotations

import yaml

from terag_neo4j.server import neo4j as local


def test_pins_are_read_from_the_compose_file() -> None:
    path = local.find_compose_file()
    doc = yaml.safe_load(path.read_text())
    pins = local.load_pins(path)
    assert pins.neo4j == doc["x-terag"]["neo4j_version"]
    assert pins.gds == doc["x-terag"]["gds_version"]


def test_gds_is_at_least_2_17() -> None:
    # 2.17 is the first GDS whose pageRank takes weighted sourceNodes [[node, bias], ...].
    assert local.version_tuple(local.load_pins().gds)[:2] >= local.MIN_GDS


def test_images_use_the_pinned_versions() -> None:
    pins = local.load_pins()
    doc = yaml.safe_load(local.find_compose_file().read_text())
    assert doc["services"]["neo4j"]["image"] == f"neo4j:{pins.neo4j}"
    assert doc["services"]["ollama"]["image"] == f"ollama/ollama:{pins.ollama}"


def test_neo4j_and_gds_are_a_supported_pair() -> None:
    # GDS 2.26 supports Neo4j 2026.01 only (one GDS minor per Neo4j minor since GDS 2.14).
    supported: dict[tuple[int, ...], tuple[int, ...]] = {(2, 26): (2026, 1)}
    pins = local.load_pins()
    gds_minor = local.version_tuple(pins.gds)[:2]
    assert supported[gds_minor] == local.version_tuple(pins.neo4j)[:2]
