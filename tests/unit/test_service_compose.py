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


def test_no_health_check_puts_a_password_on_a_command_line() -> None:
    """A process's arguments are visible to every user of the host (`ps`); cypher-shell reads
    the password from NEO4J_PASSWORD in its environment instead of `-p`."""
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))["services"]
    neo4j = " ".join(services["neo4j"]["healthcheck"]["test"]).replace("$$", "$")
    before, _, arguments = neo4j.partition("cypher-shell")
    assert 'NEO4J_PASSWORD="${NEO4J_AUTH#neo4j/}"' in before  # its environment
    assert "NEO4J_AUTH" not in arguments and "PASSWORD" not in arguments
    assert not {"-p", "--password"} & set(arguments.split())
    for name, service in services.items():
        for part in service.get("healthcheck", {}).get("test", []):
            assert "-p " not in part and "--password" not in part, name


def test_the_image_installs_the_pinned_set_and_the_service() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "-r /tmp/lock.txt" in text and "constraints.txt" in text
    assert 'CMD ["terag", "serve"' in text
