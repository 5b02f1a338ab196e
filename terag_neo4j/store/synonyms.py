"""Concept vectors written on first use, and the SYNONYM edges built on them (`store.synonyms`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import ManagedTransaction

from terag_neo4j.store.cypher import run_cypher
from terag_neo4j.store.search import VECTOR_DIMENSIONS
from terag_neo4j.store.sessions import StoreCore, chunks


class Synonyms:
    """Concept vectors and the SYNONYM edges between similar concepts (`store.synonyms`)."""

    def __init__(self, core: StoreCore) -> None:
        self.core = core

    def set_concept_vectors(self, rows: Sequence[dict[str, Any]]) -> None:
        for chunk in chunks(list(rows), self.core.write_batch):

            def work(tx: ManagedTransaction, chunk: Sequence[dict[str, Any]] = chunk) -> None:
                run_cypher(tx, "set_concept_vectors", rows=list(chunk)).consume()

            self.core.write_tx(work)

    def link(self, namespace: str, threshold: float, cap: int) -> int:
        """SYNONYM edges for every concept of the namespace that has none linked yet.

        Indexing calls it after its batches (so new concepts, and those of an interrupted run,
        get theirs); deletes need nothing, since a concept's relationships go with it. Returns
        the number of edges made or found.
        """
        uids = [r["uid"] for r in self.core.read("unlinked_concepts", namespace=namespace)]
        state = self.core.read("namespace_version", namespace=namespace)
        dims = state[0]["embedding_dimensions"] if state else None
        # The shared concept index holds one size of vector; another model's concepts are scanned
        query = "link_synonyms" if dims in (None, VECTOR_DIMENSIONS) else "link_synonyms_scan"
        links = 0
        for chunk in chunks(uids, 500):

            def work(tx: ManagedTransaction, chunk: Sequence[str] = chunk) -> int:
                rec = run_cypher(
                    tx,
                    query,
                    uids=chunk,
                    threshold=threshold,
                    cap=cap,
                    candidates=cap * 4 + 10,
                ).single()
                return int(rec["links"]) if rec else 0

            links += self.core.write_tx(work)
        return links
