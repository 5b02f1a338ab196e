"""Concept embeddings, written when a feature first needs them rather than at index time.

Only semantic concept matching (`TERAG_LINKING=ner`, the paper preset) and SYNONYM edges read
a concept's embedding; the default retrieval never does. With `TERAG_CONCEPT_VECTORS=lazy` an
ingest skips them (on 2Wiki: ~60k names to embed cold, and the vector-index inserts that made
up almost half of the write), and the first query or synonym build that needs them embeds the
names of every concept still without one. `eager` writes them with the concepts as before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt
from neo4j.exceptions import ClientError

from terag_neo4j.store import GraphStore, GraphStoreError, one_line, write_refused
from terag_neo4j.store.sessions import ReadNeedsWriter

log = logging.getLogger(__name__)


class TextEmbedder(Protocol):
    def embed(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]: ...


def ensure_concept_vectors(
    store: GraphStore, embedder: TextEmbedder, namespace: str, batch: int = 5000
) -> int:
    """Embed and store the names of the namespace's concepts that have no embedding; returns
    how many were written. Safe to run from several processes at once (see the Cypher)."""
    written = 0
    seen: set[str] = set()
    t = time.perf_counter()
    while True:
        rows = store.read("unembedded_concepts", namespace=namespace, limit=batch)
        if not rows:
            break
        if any(r["uid"] in seen for r in rows):  # a write that did not stick: do not loop
            raise GraphStoreError(f"concept embeddings of {namespace!r} could not be stored")
        seen.update(r["uid"] for r in rows)
        vectors = embedder.embed([str(r["name"]) for r in rows])
        try:
            store.synonyms.set_concept_vectors(
                [
                    {"uid": r["uid"], "embedding": v.tolist()}
                    for r, v in zip(rows, vectors, strict=True)
                ]
            )
        except ClientError as e:
            if not write_refused(e):
                raise
            raise ReadNeedsWriter(
                f"namespace {namespace!r} has concepts without embeddings, which semantic "
                f"matching reads, and this reader may not write them "
                f"({one_line(e.message, 80)}): a writer writes them once with "
                f"`TERAG_CONCEPT_VECTORS=eager terag index <its documents> --namespace "
                f"{namespace}`, or one query of this preset (through the service: by a key that "
                f"may write {namespace!r})"
            ) from e
        written += len(rows)
    if written:
        log.info(
            "embedded %d concept names of %r in %.1fs (first use of concept vectors)",
            written,
            namespace,
            time.perf_counter() - t,
        )
    return written
