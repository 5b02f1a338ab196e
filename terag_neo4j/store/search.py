"""Each namespace's own search indexes: a full-text and a vector index over its passages alone.

Every passage carries its namespace's label (`ids.passage_label`) and its folded title and
text, which the namespace's full-text index reads; the vector index reads its embedding. So
BM25's statistics and the vector graph are the namespace's own: indexing, deleting or merging
in another namespace never moves its scores. Indexes are made before a namespace's first write
and dropped with it; a namespace written by an older version is moved over on first use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from neo4j.exceptions import ClientError

from terag_neo4j import tracing
from terag_neo4j.errors import one_line
from terag_neo4j.store.connection import write_refused
from terag_neo4j.store.cypher import cypher_statements, load_cypher, run_cypher
from terag_neo4j.store.ids import fold, passage_label, text_index, vector_index
from terag_neo4j.store.sessions import SEARCH_VERSION, ReadNeedsWriter, StoreCore

log = logging.getLogger(__name__)

# The shared concept index's size (schema.cypher), and a namespace's passage index's where its
# model's dimension is not known (one made before dimensions were recorded)
VECTOR_DIMENSIONS = 384
INDEX_WAIT_S = 600


def search_fields(title: str | None, text: str | None) -> dict[str, str]:
    """What the full-text index reads of a passage: its title and text without accents."""
    return {"ft_title": fold(title or ""), "ft_text": fold(text or "")}


class SearchIndexes:
    """The namespaces' own search indexes (`store.search_indexes`)."""

    def __init__(self, core: StoreCore) -> None:
        self.core = core
        # Namespaces this store has seen with their indexes made
        self.ready: set[str] = set()

    def ensure(
        self,
        namespace: str,
        state: dict[str, Any] | None = None,
        dimensions: Callable[[], int] | None = None,
    ) -> None:
        """Make the namespace's indexes (idempotent), put every passage into them and wait until
        they are online. `state` is the namespace's `namespace_version` row, when read;
        `dimensions` gives its embedding model's vector size (asked only when an index is made;
        else the size the namespace recorded, else VECTOR_DIMENSIONS)."""
        ready = self.ready
        if namespace in ready:
            return
        if state is not None and state.get("search") == SEARCH_VERSION:
            ready.add(namespace)
            return
        try:
            recorded = (state or {}).get("embedding_dimensions")
            dims = int(recorded or (dimensions() if dimensions else VECTOR_DIMENSIONS))
            self._create_indexes(namespace, dims)
            moved = self._backfill(namespace)
            self.core.write_tx(
                lambda tx: run_cypher(
                    tx, "mark_searchable", namespace=namespace, search=SEARCH_VERSION
                ).consume()
            )
        except ClientError as e:
            if not write_refused(e):
                raise
            raise ReadNeedsWriter(
                f"namespace {namespace!r} has no search indexes of its own yet and this reader may "
                f"not make them ({one_line(e.message, 80)}): a writer makes them with one query "
                f"or `terag index` on it (through the service: a query or a document added by a "
                f"key that may write {namespace!r})"
            ) from e
        if moved:
            log.info("moved %d passages of %r into its own search indexes", moved, namespace)
        ready.add(namespace)

    def _create_indexes(self, namespace: str, dimensions: int) -> None:
        label = passage_label(namespace)
        names: dict[str, Any] = {
            "text_index": text_index(namespace),
            "vector_index": vector_index(namespace),
        }

        def run() -> None:
            # Waiting for the indexes may take INDEX_WAIT_S: longer than a statement may run
            timeout = max(self.core.statement_timeout_s, INDEX_WAIT_S + 60)
            with self.core.session(timeout_s=timeout) as s:
                with tracing.statement("namespace_indexes"):
                    for stmt in cypher_statements("namespace_indexes"):
                        s.run(
                            stmt.replace("__LABEL__", label), dimensions=dimensions, **names
                        ).consume()
                for name in names.values():
                    run_cypher(s, "await_index", name=name, seconds=INDEX_WAIT_S).consume()

        self.core.call(run)

    def _backfill(self, namespace: str, batch: int = 2000) -> int:
        label = passage_label(namespace)
        moved = 0
        while True:
            rows = self.core.read("unsearchable_passages", namespace=namespace, limit=batch)
            if not rows:
                return moved
            fields = [{"uid": r["uid"], **search_fields(r["title"], r["text"])} for r in rows]
            with tracing.statement("searchable_passages"):
                self.core.write_tx(
                    lambda tx, f=fields: tx.run(  # type: ignore[misc]
                        load_cypher("searchable_passages"), rows=f, label=label
                    ).consume()
                )
            moved += len(rows)

    def drop(self, namespace: str) -> None:
        """Drop the namespace's indexes (before its nodes: deleting them then costs no updates)."""

        def run() -> None:
            with self.core.session() as s:
                for name in (text_index(namespace), vector_index(namespace)):
                    run_cypher(s, "drop_index", name=name).consume()

        self.core.call(run)
        self.ready.discard(namespace)
