"""`terag bench-documents` on a short PDF: it generates, reads and splits the PDF and writes
seconds and peak memory to its JSON file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from terag_neo4j import cli


def test_bench_documents_writes_its_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench-documents", "--pages", "4", "--chunk-tokens", "64", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    result = json.loads((tmp_path / "documents_pdf_4p.json").read_text())
    assert result["pages_read"] == 4 and result["passages"] >= 4
    assert result["text_chars"] > 4 * 1000  # about 450 words a page
    assert 0 < result["peak_python_mib"] <= result["target_peak_mib"] == 1024
    assert result["peak_rss_mib"] > 0 and result["read_s"] > 0 and result["within_target"]
    assert "peak Python memory" in capsys.readouterr().out
