"""The parts of `terag bench-serve` that need no service: loopback only, questions files, the
summary of calls, the table and the plot."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from terag_bench.serve_clients import BenchServeError, Call, check_loopback, summarize
from terag_bench.serve_load import _questions, plot, table
from terag_bench.serve_phases import compare, record


@pytest.mark.parametrize("url", ["http://10.0.0.5:8000", "http://example.org", "https://0.0.0.0"])
def test_only_loopback_services_are_loaded(url: str) -> None:
    with pytest.raises(BenchServeError, match="loopback"):
        check_loopback(url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "http://localhost:1", "http://[::1]:8"])
def test_loopback_services_are_accepted(url: str) -> None:
    check_loopback(url)


def test_questions_file_takes_lines_and_jsonl(tmp_path: Path) -> None:
    f = tmp_path / "q.txt"
    f.write_text('Who?\n\n{"question": "Where?", "id": "q2"}\n', encoding="utf-8")
    assert _questions(f) == ["Who?", "Where?"]


def call(ns: str, q: str, ids: list[str] | None, seconds: float = 0.1) -> Call:
    passages = None if ids is None else [(i, i, "text") for i in ids]
    return Call(ns, q, 0.0, seconds, passages, None if ids is not None else "503: busy")


def test_summary_and_consistency_counts() -> None:
    calls = [call("a", "q1", ["p1", "p2"]), call("a", "q1", ["p2", "p1"]), call("a", "q2", None)]
    s = summarize(calls, 2.0)
    assert s["queries"] == 3 and s["queries_per_s"] == 1.5 and s["error_count"] == 1
    assert s["p50_ms"] == 100.0 and s["errors"] == ["503: busy"]
    baseline: dict[str, set[tuple[str, ...]]] = {}
    record(baseline, calls[:1], "a")
    assert compare(baseline, calls, "a") == {"same": 1, "different": 1, "not_seen_before": 0}


def test_table_and_plot(tmp_path: Path) -> None:
    run = {
        "clients": 1, "queries_per_s": 10.0, "p50_ms": 90.0, "p95_ms": 120.0, "p99_ms": 150.0,
        "error_count": 0, "rss_start_mib": 900.0, "rss_end_mib": 910.0,
    }  # fmt: skip
    result = {
        "dataset": "tiny",
        "namespace": "ns",
        "runs": [run, {**run, "clients": 4, "queries_per_s": 18.0}],
        "inprocess": {"queries": 10, "p50_ms": 88.0, "p95_ms": 99.0},
        "http_p50_minus_inprocess_p50_ms": 2.0,
    }
    text = table(result)
    assert "in-process: p50 88.0 ms" in text and "900→910" in text
    assert plot(result, tmp_path / "p.png").stat().st_size > 1000


def test_registered_with_its_options() -> None:
    from terag_bench.serve_load import register_cli

    parser = argparse.ArgumentParser()
    register_cli(parser.add_subparsers())
    args = parser.parse_args(["bench-serve", "--mixed", "--soak", "600"])
    assert args.clients == [1, 4, 8, 16] and args.seconds == 60.0 and args.soak == 600.0
