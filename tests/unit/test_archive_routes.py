"""Unit tests of the archive routes' bounds without a service: the front door's rule for an
import (write scope, TERAG_MAX_ARCHIVE_BYTES, application/zip) and for an export (read scope),
the export slots per process and per key, the spool's sweep, and the remote client's reading of
an archive's namespace."""

from __future__ import annotations

import json
import os
import time
import zipfile
from pathlib import Path

import pytest

from terag_neo4j.service.archives import EXPORTS, PART_S, ExportSlots, sweep
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.policy import ZIP, classify
from terag_neo4j.service.remote_archives import archive_namespace

MIB = 1024 * 1024


def test_an_import_writes_takes_the_archive_limit_and_only_a_zip() -> None:
    rule = classify("POST", "/v1/namespaces/wiki/import", 32 * MIB, 4096 * MIB)
    assert rule.namespace == "wiki" and rule.write and rule.max_body == 4096 * MIB
    assert rule.content_type == ZIP
    export = classify("GET", "/v1/namespaces/wiki/export", 32 * MIB, 4096 * MIB)
    assert export.namespace == "wiki" and not export.write
    # the archive limit is the import's alone
    docs = classify("POST", "/v1/namespaces/wiki/documents", 32 * MIB, 4096 * MIB)
    assert docs.max_body == 32 * MIB


def test_exports_are_bounded_per_process_and_per_key() -> None:
    slots = ExportSlots(shared=True)
    with slots.held("a"):
        with pytest.raises(ServiceError) as e, slots.held("a"):
            pass
        assert e.value.status == 429 and "\n" not in e.value.message
        with slots.held("b"):
            assert slots.total == EXPORTS
    assert slots.total == 0 and slots.per_key == {"a": 0, "b": 0}
    alone = ExportSlots(shared=False)
    with alone.held(""), alone.held(""), pytest.raises(ServiceError), alone.held(""):
        pass


def test_the_sweep_removes_only_archives_no_unfinished_job_needs(tmp_path: Path) -> None:
    old = time.time() - PART_S - 60
    names = ["aaaa.zip", "bbbb.zip", "cccc.zip.part", "dddd.zip.part", "eeee.zip"]
    for n in names:
        (tmp_path / n).write_bytes(b"x")
    for n in names[:3]:
        os.utime(tmp_path / n, (old, old))
    # aaaa's job still runs; bbbb's ended; cccc was left by a dead process; dddd and eeee are new
    removed = sweep(tmp_path, lambda job_id: job_id == "aaaa")
    assert removed == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aaaa.zip", "dddd.zip.part", "eeee.zip"]


def test_the_remote_client_reads_an_archives_namespace_or_says_why_not(tmp_path: Path) -> None:
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"namespace": "wiki"}))
    assert archive_namespace(good) == "wiki"
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a namespace archive") as e:
        archive_namespace(bad)
    assert "\n" not in str(e.value)
