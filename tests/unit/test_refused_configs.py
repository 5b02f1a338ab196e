"""A real `terag serve` refuses an unsafe configuration at start, before Neo4j or anything else
is started or reached, with one line naming the setting: a keyless service open to other sites
(TERAG_CORS_ORIGINS) or host names (TERAG_ALLOWED_HOSTS), and a key too short to be random."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"TERAG_CORS_ORIGINS": "*"}, "TERAG_CORS_ORIGINS: '*' lets pages of other sites"),
        ({"TERAG_ALLOWED_HOSTS": "*"}, "TERAG_ALLOWED_HOSTS: '*' lets a service without"),
        (
            {"TERAG_API_KEYS": json.dumps({"eight-ch": {"namespaces": "*"}})},
            "TERAG_API_KEYS: key 1 has 8 characters; a key needs at least 22",
        ),
    ],
    ids=["cors", "hosts", "short-key"],
)
def test_serve_refuses_an_unsafe_configuration_in_one_line(env: dict[str, str], says: str) -> None:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TERAG_API_KEYS", "TERAG_CORS_ORIGINS", "TERAG_ALLOWED_HOSTS")
    }
    base["NEO4J_URI"] = "bolt://127.0.0.1:1"  # nothing may be started or reached
    proc = subprocess.run(
        [sys.executable, "-m", "terag_neo4j.cli", "serve", "--port", "0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**base, **env},
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], lines
    assert "eight-ch" not in proc.stderr


def test_the_api_pages_are_off_unless_asked_for_and_the_schema_stays() -> None:
    """The real app, not started: /docs and /redoc load a CDN's scripts on the console's
    origin, so they are routes only with TERAG_API_DOCS=true."""
    from terag_neo4j.service.app import create_app
    from terag_neo4j.service.settings import ServiceSettings

    def paths(**kw: bool) -> set[str]:
        app = create_app(ServiceSettings.model_validate(kw))
        return {str(getattr(r, "path", "")) for r in app.routes}

    default = paths()
    assert "/openapi.json" in default and not {"/docs", "/redoc"} & default
    assert {"/docs", "/redoc", "/openapi.json"} <= paths(api_docs=True)
