"""docker-compose.yml runs the service beside Neo4j, checked by its health endpoint."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_compose_runs_terag_beside_neo4j_with_a_health_check() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))["services"]
    terag = services["terag"]
    assert terag["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert terag["environment"]["NEO4J_URI"] == "bolt://neo4j:7687"
    assert "/v1/health" in " ".join(terag["healthcheck"]["test"])
    assert all(p.startswith("127.0.0.1:") for p in terag["ports"])  # loopback on the host
    assert "--host" in (ROOT / "Dockerfile").read_text(encoding="utf-8")


def test_the_image_installs_the_pinned_set_and_the_service() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "-r /tmp/lock.txt" in text and "constraints.txt" in text
    assert 'CMD ["terag", "serve"' in text
