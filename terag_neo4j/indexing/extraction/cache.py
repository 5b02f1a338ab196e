"""The extraction cache: what each passage gave, keyed by passage hash and backend, outside
Neo4j; and `extract_with_cache`, which pays only for passages the cache has not seen."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from terag_neo4j.core.concepts import Concept, Extraction
from terag_neo4j.core.documents import Passage, content_hash
from terag_neo4j.core.extractor import Extractor
from terag_neo4j.core.sqlite_cache import open_cache

log = logging.getLogger(__name__)


class ExtractionCache:
    """Extractions keyed by (passage hash, backend, model, prompt version).

    Kept outside Neo4j on purpose: it survives a dropped namespace or a dead database, so
    re-indexing or resuming an interrupted ingest never pays the LLM twice for one passage.
    """

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_cache(
            path,
            "CREATE TABLE IF NOT EXISTS extraction (key TEXT PRIMARY KEY, concepts TEXT NOT NULL,"
            " input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL)",
        )

    @staticmethod
    def key(passage_hash: str, backend: str, model: str, version: str) -> str:
        return content_hash(f"{passage_hash}|{backend}|{model}|{version}")

    def get_many(
        self, keys: Sequence[str]
    ) -> dict[str, tuple[tuple[Concept, ...], int | None, int | None]]:
        out: dict[str, tuple[tuple[Concept, ...], int | None, int | None]] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                q = ",".join("?" * len(chunk))
                for k, concepts, tin, tout in self._db.execute(
                    f"SELECT key, concepts, input_tokens, output_tokens FROM extraction WHERE key IN ({q})",
                    chunk,
                ):
                    # -1: the server sent no counts when it was made
                    known = tin >= 0 and tout >= 0
                    out[k] = (
                        tuple(Concept(t, n) for t, n in json.loads(concepts)),
                        tin if known else None,
                        tout if known else None,
                    )
        return out

    def put_many(self, rows: Sequence[tuple[str, tuple[Concept, ...], int, int]]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO extraction VALUES (?, ?, ?, ?)",
                [(k, json.dumps([[c.type, c.name] for c in cs]), i, o) for k, cs, i, o in rows],
            )
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()


def extract_with_cache(
    extractor: Extractor,
    passages: Sequence[Passage],
    cache: ExtractionCache,
    run_id: str,
    chunk: int = 64,
    progress: object | None = None,
) -> list[Extraction]:
    """Extract every passage, paying only for those the cache has not seen.

    New results are written to the cache chunk by chunk, so an interrupted ingest keeps what it
    already paid for.
    """
    keys = [cache.key(p.hash, extractor.name, extractor.model, extractor.version) for p in passages]
    hits = cache.get_many(keys)
    results: dict[str, Extraction] = {}
    todo: list[Passage] = []
    for p, k in zip(passages, keys, strict=True):
        if k in hits:
            concepts, tin, tout = hits[k]
            # The tokens were paid by the run that filled the cache; kept so a graph rebuilt from
            # the cache still knows what its extraction cost.
            results[p.id] = Extraction(
                p.id,
                p.hash,
                concepts,
                tin or 0,
                tout or 0,
                cached=True,
                tokens_known=tin is not None and tout is not None,
            )
        else:
            todo.append(p)
    if hits:
        log.info("extraction cache: %d of %d passages already extracted", len(hits), len(passages))
    if progress is not None and hits:
        progress.update(len(passages) - len(todo))  # type: ignore[attr-defined]
    for i in range(0, len(todo), chunk):
        part = todo[i : i + chunk]
        fresh = extractor.extract(part, run_id)
        cache.put_many(
            [
                (
                    cache.key(e.passage_hash, extractor.name, extractor.model, extractor.version),
                    e.concepts,
                    e.input_tokens if e.tokens_known else -1,
                    e.output_tokens if e.tokens_known else -1,
                )
                for e in fresh
            ]
        )
        for e in fresh:
            results[e.passage_id] = e
        if progress is not None:
            progress.update(len(part))  # type: ignore[attr-defined]
    return [results[p.id] for p in passages]
