"""An older release's database under today's code, against the real Neo4j+GDS: the release
before the import jobs (16a5cbb: its jobs have no kind, its namespaces and jobs no count of
unknown tokens), installed in a venv of its own as a user would, indexes 60 passages of 2Wiki,
records ten top-10s, ends one job and leaves one queued; today's code then reads all of it
(the same counts, document ids, fingerprint and top-10s), runs the queued job with today's
worker, writes, deletes, runs a new job and retrieves again (`terag bench-upgrade`'s checks).
A few minutes: slow."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from terag_neo4j.config import Settings
from tests.fixtures.wiki import WIKI
from tests.integration.conftest import connection_env

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
OLDER = "16a5cbb"  # the main of the landing before namespace archives and import jobs


def test_an_older_releases_database_serves_and_writes_under_todays_code(
    base_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from terag_bench.datasets import load_dataset
    from terag_bench.upgrade_bench import upgrade

    known = subprocess.run(
        ["git", "-C", str(REPO), "cat-file", "-e", f"{OLDER}^{{commit}}"], check=False
    )
    if known.returncode != 0:
        pytest.skip(f"this checkout does not hold {OLDER} (a shallow clone)")
    if not (WIKI / "corpus.jsonl").is_file():
        pytest.skip(f"no 2Wiki corpus at {WIKI}")
    dataset = load_dataset(WIKI, limit=10)
    result = upgrade(
        base_settings,
        REPO,
        OLDER,
        dataset,
        limit=60,
        questions=10,
        cache=tmp_path_factory.mktemp("upgrade"),
        old_env={**connection_env(base_settings), "TERAG_EXTRACTOR": "spacy"},
    )
    failed = [name for name, ok in result["checks"].items() if not ok]
    assert not failed, result
    assert result["same_top10"] == "10/10" and result["passages"] == 60
