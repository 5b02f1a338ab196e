"""The docs site builds with `mkdocs build --strict`: a broken link or anchor, a page missing
from the nav, or an API reference that does not resolve is an error. The generated parts are
checked in the built pages: every setting, every command, the service's routes and tools."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from terag_neo4j.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def settings_env_names() -> set[str]:
    names = set()
    for name, field in Settings.model_fields.items():
        choices = getattr(field.validation_alias, "choices", None)
        names.add(str(choices[0]) if choices else f"TERAG_{name.upper()}")
    return names


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]

    configuration = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    missing = sorted(n for n in settings_env_names() if n not in configuration)
    assert not missing, f"settings missing from the built configuration page: {missing}"

    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("index", "retrieve", "ask", "serve", "mcp", "server start", "bench-load"):
        assert f"terag {command}" in cli, f"the CLI reference lacks `terag {command}`"
    assert "usage: terag index" in cli, "the CLI reference is not the parser's help"

    service = (site / "service" / "index.html").read_text(encoding="utf-8")
    assert "/v1/namespaces/{namespace}/retrieve" in service and "why_retrieved" in service

    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for anchor in (
        "terag_neo4j.TeragClient.retrieve",
        "terag_neo4j.AsyncTeragClient",
        "terag_neo4j.TeragError",
    ):
        assert f'id="{anchor}"' in api, f"the API reference lacks {anchor}"
