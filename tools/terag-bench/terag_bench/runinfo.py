"""What the indexing and latency benchmarks record besides their own numbers: memory of this
process and of the local Neo4j, the machine, and the JSON file under the results folder."""

from __future__ import annotations

import json
import logging
import os
import platform
import resource
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def peak_rss_mib() -> float:
    """This process's own peak RSS: `VmHWM`, not `ru_maxrss`, which in a spawned process starts
    at its parent's peak (the kernel keeps the forked copy's high-water mark across exec: a
    query process spawned by a 1M ingest reported the ingest's 3 GB)."""
    own = process_rss_mib(os.getpid()).get("VmHWM")
    return own if own is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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
        from terag_neo4j.local.neo4j_process import status

        st = status(Settings())
        pid = getattr(st, "pid", None)
        return process_rss_mib(int(pid)) if pid else {}
    except Exception:  # a remote server: nothing to measure here
        return {}


def write_result(out_dir: Path, name: str, data: dict[str, Any]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    data = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
        },
        **data,
    }
    path = out_dir / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
    log.info("wrote %s", path)
    return path
