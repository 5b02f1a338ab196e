"""`terag bench-documents` on a short PDF: it generates, reads and splits the PDF and writes
seconds and peak memory to its JSON file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_bench_documents_writes_its_numbers(tmp_path: Path) -> None:
    # Its own process: peak RSS is the process's, and a test process has loaded much else.
    argv = ["bench-documents", "--pages", "4", "--chunk-tokens", "64", "--out", str(tmp_path)]
    run = subprocess.run(
        [sys.executable, "-m", "terag_neo4j.cli", *argv], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads((tmp_path / "documents_pdf_4p.json").read_text())
    assert result["pages_read"] == 4 and result["passages"] >= 4
    assert result["text_chars"] > 4 * 1000  # about 450 words a page
    assert 0 < result["peak_python_mib"] <= result["target_peak_mib"] == 1024
    assert result["peak_rss_mib"] > 0 and result["read_s"] > 0 and result["within_target"]
    assert "peak Python memory" in run.stdout
