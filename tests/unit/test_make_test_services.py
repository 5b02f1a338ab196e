"""`make test` stops the servers it started and says in one line what still runs: the Makefile's
test recipe ends with `scripts/test_services.py stop`, and that prints one line (here, in a
home where nothing runs, that it started none and nothing is left)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_test_recipe_stops_its_servers_after_the_suite() -> None:
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^test: .*?\n((?:\t.*\n)+)", make, re.M)
    assert recipe, "no test target"
    lines = recipe.group(1).splitlines()
    assert "prepare-test" in lines[0]
    assert "pytest" in lines[-1] and "scripts/test_services.py stop" in lines[-1]
    assert lines[-1].rstrip().endswith("exit $$rc")  # the suite's status, not the stop's
    assert "scripts/test_services.py start" in make
    assert (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().endswith("make test")


def test_stop_says_in_one_line_what_it_stopped_and_what_runs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "make-test-started.json").write_text('["neo4j", "ollama"]', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("NEO4J_URI", "OLLAMA_HOST")}
    env.update(TERAG_HOME=str(home), TERAG_NEO4J_BOLT_PORT="1", TERAG_NEO4J_HTTP_PORT="2")
    r = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "test_services.py"), "stop"],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["make test: started no server"], r.stdout
    assert not (home / "make-test-started.json").exists()
