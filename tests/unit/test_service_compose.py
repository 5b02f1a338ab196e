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


def test_compose_runs_two_replicas_on_one_neo4j_sharing_the_job_queue() -> None:
    """Two `terag` services, alike but for their host port and home volume: the same Neo4j, the
    same job queue (jobs live in Neo4j, so either replica polls, cancels and finishes them)."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    services = compose["services"]
    replicas = {n: s for n, s in services.items() if s.get("build") == "."}
    assert sorted(replicas) == ["terag", "terag-2"]
    first, second = replicas["terag"], replicas["terag-2"]
    assert first["environment"] == second["environment"]
    for s in (first, second):
        assert s["environment"]["NEO4J_URI"] == "bolt://neo4j:7687"
        assert s["depends_on"]["neo4j"]["condition"] == "service_healthy"
        assert "/v1/health" in " ".join(s["healthcheck"]["test"])
        assert all(p.startswith("127.0.0.1:") for p in s["ports"])
    queue = first["environment"]["TERAG_JOB_QUEUE"]
    assert (
        queue.startswith("${TERAG_JOB_QUEUE:-")
        and queue == second["environment"]["TERAG_JOB_QUEUE"]
    )
    # Distinct host ports and homes; one Neo4j between them
    host_port = [s["ports"][0].rsplit(":", 1)[0] for s in (first, second)]
    assert host_port[0] != host_port[1]
    assert first["volumes"] != second["volumes"]
    assert {v.split(":")[0] for s in (first, second) for v in s["volumes"]} <= set(
        compose["volumes"]
    )
    assert [n for n, s in services.items() if "neo4j" in str(s.get("image", ""))] == ["neo4j"]
