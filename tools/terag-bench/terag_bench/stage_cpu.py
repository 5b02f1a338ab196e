"""Where an ingest's CPU goes: seconds per 1,000 passages for each stage, for this process
and for the local Neo4j, beside the wall time (`terag bench-index` prints the table).

The ingest records the CPU of the thread that ran each stage (`IngestReport.*_cpu_s`). What
the process spent besides, on threads the pipeline did not start (the embedder's inference
workers, chiefly), is the process's CPU less those; Neo4j's is read from /proc before and after.
"""

from __future__ import annotations

import contextlib
import resource
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STAGES = ("chunking", "extraction", "embedding", "write", "grounding")


def process_cpu_s() -> float:
    """This process's user + system CPU seconds, every thread."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def pid_cpu_s(pid: int | None) -> float | None:
    """User + system CPU seconds of process `pid` (from /proc), None when it cannot be read."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # fields[0] is the state (field 3): utime and stime are fields 14 and 15
    import os

    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def neo4j_pid() -> int | None:
    """The local managed Neo4j's process id, None for a remote server."""
    try:
        from terag_neo4j.config import Settings
        from terag_neo4j.local.neo4j_process import status

        pid = getattr(status(Settings()), "pid", None)
        return int(pid) if pid else None
    except Exception:  # a remote server: nothing to read here
        return None


@dataclass
class CpuMeter:
    """Process and Neo4j CPU between `start` and `stop`."""

    neo4j: int | None = None
    process_s: float = 0.0
    neo4j_s: float | None = None

    def start(self) -> None:
        self.neo4j = neo4j_pid()
        self.process_s = -process_cpu_s()
        n = pid_cpu_s(self.neo4j)
        self.neo4j_s = -n if n is not None else None

    def stop(self) -> None:
        self.process_s += process_cpu_s()
        n = pid_cpu_s(self.neo4j)
        self.neo4j_s = self.neo4j_s + n if self.neo4j_s is not None and n is not None else None


def stage_table(report: Any, meter: CpuMeter, wall_s: float) -> dict[str, Any]:
    """CPU seconds (total and per 1,000 passages) by stage, the process's other threads, the
    process, Neo4j; with the wall time of the ingest."""
    n = max(int(report.passages_total), 1)
    rows: dict[str, float | None] = {s: float(getattr(report, f"{s}_cpu_s")) for s in STAGES}
    staged = sum(v for v in rows.values() if v is not None)
    rows["other threads (inference workers)"] = max(meter.process_s - staged, 0.0)
    rows["process"] = meter.process_s
    rows["neo4j"] = meter.neo4j_s
    return {
        "passages": int(report.passages_total),
        "wall_s": round(wall_s, 2),
        "cpu_s": {k: None if v is None else round(v, 2) for k, v in rows.items()},
        "cpu_s_per_1000": {
            k: None if v is None else round(v * 1000 / n, 2) for k, v in rows.items()
        },
    }


def format_table(table: dict[str, Any]) -> str:
    lines = [f"{'stage':<36} {'CPU s':>9} {'CPU s / 1,000 passages':>24}"]
    for k, v in table["cpu_s"].items():
        per = table["cpu_s_per_1000"][k]
        lines.append(
            f"{k:<36} {'-' if v is None else f'{v:.1f}':>9} {'-' if per is None else f'{per:.1f}':>24}"
        )
    lines.append(
        f"{'wall':<36} {table['wall_s']:>9.1f} {table['wall_s'] * 1000 / table['passages']:>24.1f}"
    )
    return "\n".join(lines)


@contextlib.contextmanager
def cold_caches(client: Any) -> Iterator[None]:
    """`client` indexes with empty extraction and embedding caches of its own (in a temporary
    folder, removed after), so nothing an earlier run paid for is reused."""
    from terag_neo4j.embeddings import CachedEmbedder, model_id, settings_embedder
    from terag_neo4j.indexing.extraction import ExtractionCache

    tmp = Path(tempfile.mkdtemp(prefix="terag-cold-"))
    settings = client.settings
    embedder = settings_embedder(settings.embedding_model, settings)
    embedder._home = settings.home  # the model's files stay where they are; the cache is new
    cached = CachedEmbedder(embedder, tmp / "embeddings.sqlite3")
    cache = ExtractionCache(tmp / "extractions.sqlite3")
    # The client builds these lazily: set before its first use, they are the ones it indexes with
    client._embedders[model_id(settings.embedding_model)] = cached
    client._cache = cache
    try:
        yield
    finally:
        cached.close()
        cache.close()
        shutil.rmtree(tmp, ignore_errors=True)
