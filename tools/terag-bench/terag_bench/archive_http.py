"""`terag bench-archive --url`: the same namespace exported and imported through a running
`terag serve` (GET .../export streamed to a file, POST .../import as a job), timed in the same
run as the library's, with the service process's RSS before and after each when its pid is
given (memory flat: the archive never enters the service's memory)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any


def _rss_mib(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def http_round_trip(
    url: str, pid: int | None, ns: str, target: str, tmp: Path, fingerprint: Any
) -> dict[str, Any]:
    """Export `ns` and import it as `target` through the service at `url` (TERAG_API_KEY from
    the environment); seconds, RSS and whether `target` has `ns`'s fingerprint."""
    from terag_neo4j.service.remote_client import TeragRemote

    out: dict[str, Any] = {"service_rss_before_mib": _rss_mib(pid)}
    with TeragRemote(url, api_key=os.environ.get("TERAG_API_KEY"), timeout=600) as r:
        path = tmp / "http.zip"
        t = time.perf_counter()
        r.export_namespace(path, ns)
        out["http_export_s"] = round(time.perf_counter() - t, 2)
        out["service_rss_after_export_mib"] = _rss_mib(pid)
        t = time.perf_counter()
        job = r.import_namespace(path, target, wait=True, timeout=3600)
        out["http_import_s"] = round(time.perf_counter() - t, 2)
        out["service_rss_after_import_mib"] = _rss_mib(pid)
        out["http_job_state"] = job.state
        out["http_archive_mib"] = round(path.stat().st_size / 2**20, 2)
    out["http_same_fingerprint"] = fingerprint(ns) == fingerprint(target)
    return out
