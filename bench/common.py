"""Shared helpers of the benchmark scripts (run them with `python -m bench.<name>`)."""

from __future__ import annotations

import json
import logging
import os
import platform
import resource
import sys
from pathlib import Path
from typing import Any

from terag_neo4j.documents import Document

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def datasets_root() -> Path:
    return Path(os.environ.get("TERAG_DATASETS", ROOT.parent / "shared" / "datasets"))


def load_corpus(folder: Path, limit: int | None = None) -> list[Document]:
    docs = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            docs.append(Document(id=r["id"], title=r["title"], text=r["text"], is_passage=True))
            if limit and len(docs) >= limit:
                break
    return docs


def load_questions(folder: Path) -> list[dict[str, Any]]:
    with (folder / "questions.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def process_rss_mib(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS", "VmHWM")):
                key, value = line.split(":")
                out[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return out


def neo4j_server_rss() -> dict[str, float]:
    """RSS of the local managed Neo4j, if that is what we talk to."""
    try:
        from terag_neo4j.config import Settings
        from terag_neo4j.server import neo4j as local

        st = local.status(Settings())
        pid = getattr(st, "pid", None)
        return process_rss_mib(int(pid)) if pid else {}
    except Exception:  # a remote server: nothing to measure here
        return {}


def write_result(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
        },
        **data,
    }
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
    logging.getLogger("bench").info("wrote %s", path)
    return path


def setup_logging() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("neo4j", "httpx", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
