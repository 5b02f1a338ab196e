"""The on-disk caches (extractions, embeddings, reader answers) share one way of opening SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_cache(path: Path, table_ddl: str) -> sqlite3.Connection:
    """A connection shared by threads (callers hold their own lock around writes), in WAL mode
    so a reader in another process does not block an ingest, with `table_ddl` applied."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(table_ddl)
    db.commit()
    return db
