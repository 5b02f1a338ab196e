"""`terag bench-serve` against the session's real service, briefly: 1 and 2 clients for about 3 s
each on the small namespace A, in-process retrieval beside it, a mixed run and a short soak."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.service.conftest import KEY_ALL, REPO, Service

pytestmark = pytest.mark.integration

QUESTIONS = [
    "Who designed the Volkswagen Beetle?",
    "Where is Porsche based?",
    "What did Ferdinand Porsche found?",
]
RUN_KEYS = {"clients", "queries", "queries_per_s", "p50_ms", "p95_ms", "p99_ms", "error_count"}


def test_bench_serve_writes_every_figure_with_no_errors(service: Service, tmp_path: Path) -> None:
    qfile = tmp_path / "questions.txt"
    qfile.write_text("\n".join(QUESTIONS) + "\n", encoding="utf-8")
    upload_ns = f"{service.ns_a}-up"
    cmd = [
        sys.executable, "-m", "terag_neo4j.cli", "bench-serve",
        "--url", service.url, "--pid", str(service.pid), "--api-key", KEY_ALL,
        "--namespace", service.ns_a, "--questions-file", str(qfile),
        "--clients", "1", "2", "--seconds", "3", "--inprocess-seconds", "2",
        "--mixed", "--mixed-passages", "24", "--mixed-clients", "2",
        "--soak", "4", "--soak-uploads", "2", "--upload-namespace", upload_ns,
        "--out", str(tmp_path), "--name", "serve_tiny",
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=REPO, env=service.env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "clients" in proc.stdout and "HTTP p50 - in-process p50" in proc.stdout

    data = json.loads((tmp_path / "serve_tiny.json").read_text(encoding="utf-8"))
    assert (tmp_path / "serve_tiny.png").stat().st_size > 0
    assert [r["clients"] for r in data["runs"]] == [1, 2]
    for r in data["runs"]:
        assert r.keys() >= RUN_KEYS
        assert r["queries"] > 0 and r["error_count"] == 0, r
        assert r["rss_start_mib"] > 0 and r["rss_end_mib"] > 0
        # The service answers what in-process retrieval answered for the same question
        assert r["same_as_before"]["different"] == 0, r["same_as_before"]
    assert data["inprocess"]["queries"] > 0 and data["inprocess"]["p50_ms"] > 0
    assert isinstance(data["http_p50_minus_inprocess_p50_ms"], float)
    assert data["machine"]["cpus"] and len(data["load_average_start"]) == 3

    mixed = data["mixed"]
    assert mixed["error_count"] == 0 and mixed["ingest_state"] == "succeeded", mixed
    assert mixed["upload_namespace_queries"] > 0
    assert mixed["upload_namespace_inconsistent"] == 0, mixed["inconsistent_examples"]
    assert mixed["read_namespace_answers"]["different"] == 0
    assert mixed["documents_missing_count"] == 0

    soak = data["soak"]
    assert soak["error_count"] == 0 and soak["queries"] > 0
    assert soak["uploads"] == 2 and soak["uploads_lost"] == 0, soak
    assert soak["rss_growth_pct"] is not None

    # The upload namespace is the bench's own: dropped afterwards
    r = httpx.get(
        f"{service.url}/v1/namespaces/{upload_ns}",
        headers={"Authorization": f"Bearer {KEY_ALL}"},
        timeout=60,
    )
    assert r.status_code == 404


def test_bench_serve_against_a_baseline_commit_runs_both_services_in_turns(
    service: Service, tmp_path: Path
) -> None:
    qfile = tmp_path / "questions.txt"
    qfile.write_text("\n".join(QUESTIONS) + "\n", encoding="utf-8")
    cmd = [
        sys.executable, "-m", "terag_neo4j.cli", "bench-serve",
        "--baseline-rev", "HEAD", "--rounds", "2", "--warmup", "1", "--api-key", KEY_ALL,
        "--namespace", service.ns_a, "--questions-file", str(qfile),
        "--clients", "1", "2", "--seconds", "2", "--out", str(tmp_path), "--name", "versus",
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=REPO, env=service.env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "| clients |" in proc.stdout

    data = json.loads((tmp_path / "versus.json").read_text(encoding="utf-8"))
    sha = data["baseline_rev"]
    assert set(data["sides"]) == {"current", f"baseline {sha}"}
    for side in data["sides"].values():
        assert set(side) == {"1", "2"}
        for row in side.values():
            # every round of both services answered, with no error
            assert len(row["rounds"]) == 2 and all(q > 0 for q in row["rounds"]), row
            assert row["errors"] == 0 and row["p50_ms"] > 0
    assert set(data["ratio_throughput"]) == {"1", "2"}
    assert all(r > 0 for r in data["ratio_throughput"].values())
