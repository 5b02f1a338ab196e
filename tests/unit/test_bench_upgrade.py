"""terag bench-upgrade's parts that need no database: a revision is resolved in the repository
(an option-like or unknown one refused in one line), and the spec the older release runs keeps
the job documents apart from the namespace's (their own ids, their own namespace and queue)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from terag_bench.upgrade_bench import resolve, spec_for

from terag_neo4j.core.documents import Document

REPO = Path(__file__).resolve().parents[2]


def test_a_revision_resolves_to_its_commit_and_a_bad_one_is_refused() -> None:
    if subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], check=False).returncode:
        pytest.skip("not a git checkout")
    assert re.fullmatch(r"[0-9a-f]{40}", resolve(REPO, "HEAD"))
    for bad in ("--output=/tmp/x", "no-such-revision-here"):
        with pytest.raises(SystemExit, match=r"^bench-upgrade: .* is not a commit"):
            resolve(REPO, bad)


def test_the_spec_keeps_the_jobs_documents_apart() -> None:
    docs = [Document(id=f"p{i}", text=f"text {i}", title=f"T{i}") for i in range(20)]
    questions = [SimpleNamespace(question=f"q{i}?") for i in range(12)]
    spec = spec_for(SimpleNamespace(documents=docs, questions=questions), 15, 10, "ab" * 20)
    assert [d["id"] for d in spec["documents"]] == [f"p{i}" for i in range(15)]
    ids = {d["id"] for d in spec["documents"]}
    jobs = [d["id"] for d in spec["job_documents"] + spec["queued_documents"]]
    assert len(jobs) == 10 and not ids & set(jobs)
    assert spec["job_namespace"] != spec["namespace"] and spec["queue"].startswith("upgrade-")
    assert spec["questions"] == [f"q{i}?" for i in range(10)]
