"""Unit tests of `terag bench-index`'s stage table: CPU per stage and per 1,000 passages, the
process's other threads, and CPU read from /proc (no services)."""

from __future__ import annotations

import os
import time

import pytest
from terag_bench.stage_cpu import CpuMeter, format_table, pid_cpu_s, stage_table

from terag_neo4j.indexing.report import IngestReport


def _report() -> IngestReport:
    r = IngestReport("run", "ns", "spacy", "m", passages_total=500)
    r.chunking_cpu_s, r.extraction_cpu_s, r.embedding_cpu_s = 1.0, 20.0, 3.0
    r.write_cpu_s, r.grounding_cpu_s = 2.0, 4.0
    return r


def test_the_table_puts_the_unstaged_process_cpu_on_other_threads() -> None:
    meter = CpuMeter(process_s=50.0, neo4j_s=12.5)
    table = stage_table(_report(), meter, 40.0)
    cpu, per = table["cpu_s"], table["cpu_s_per_1000"]
    assert cpu["extraction"] == 20.0 and per["extraction"] == 40.0
    assert cpu["other threads (inference workers)"] == 20.0  # 50 - (1 + 20 + 3 + 2 + 4)
    assert per["neo4j"] == 25.0 and per["process"] == 100.0
    text = format_table(table)
    assert "extraction" in text and "80.0" in text  # the wall, per 1,000 passages


def test_a_remote_neo4j_shows_as_unknown() -> None:
    table = stage_table(_report(), CpuMeter(process_s=30.0, neo4j_s=None), 10.0)
    assert table["cpu_s"]["neo4j"] is None
    assert "-" in format_table(table).splitlines()[-2]


def test_cpu_is_read_from_proc_for_a_process_and_missing_for_none() -> None:
    before = pid_cpu_s(os.getpid())
    assert before is not None
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    after = pid_cpu_s(os.getpid())
    assert after is not None and after - before == pytest.approx(0.3, abs=0.15)
    assert pid_cpu_s(None) is None and pid_cpu_s(2**30) is None
