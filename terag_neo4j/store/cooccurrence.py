"""The lazy CO_OCCURRENCE builder: a namespace written without pairs gets them, in resumable
batches, when a walk first needs them."""

from __future__ import annotations

from neo4j import ManagedTransaction

from terag_neo4j.store.core import StoreCore, bump_version_tx
from terag_neo4j.store.cypher import load_cypher
from terag_neo4j.store.pairs import apply_pair_deltas, pair_deltas


class CooccurrenceBuilder(StoreCore):
    def build_cooccurrence(
        self, namespace: str, batch: int = 1000, max_batches: int | None = None
    ) -> int | None:
        """Give a lazy namespace its CO_OCCURRENCE pairs, counted from its HAS_PASSAGE links, and
        keep them from then on. The number of pair updates, or None when they were kept already.

        One transaction per `batch` passages (the whole of 2Wiki in one outgrows Neo4j's
        transaction memory): each marks its passages `paired`, so a killed build resumes where it
        stopped, and writers meanwhile count pairs for marked passages only (`pairs_counted`),
        leaving new ones to the builder. The last batch sets the namespace 'kept'.
        `max_batches` stops after that many transactions; the next call goes on.
        """

        # Concepts of the passages this call has paired: a pair with a concept outside it cannot
        # exist yet (writers never create pairs while a build is under way), so it is created
        # without a lookup. None when resuming a build another call started: look every pair up.
        seen: set[str] | None = None

        def work(tx: ManagedTransaction) -> tuple[int, set[str], bool] | None:
            nonlocal seen
            state = self._lock(tx, namespace)
            if state == "kept":
                return None
            if state == "lazy":
                tx.run(
                    load_cypher("set_cooccurrence"), namespace=namespace, state="building"
                ).consume()
                seen = set()
            rows = [
                r.data()
                for r in tx.run(load_cypher("unpaired_passages"), namespace=namespace, limit=batch)
            ]
            if not rows:
                tx.run(load_cypher("set_cooccurrence"), namespace=namespace, state="kept").consume()
                bump_version_tx(tx, namespace, None)
                return 0, set(), True
            concepts = {c for r in rows for c in r["concepts"]}
            unseen = frozenset(concepts - seen) if seen is not None else frozenset()
            deltas = pair_deltas([r["concepts"] for r in rows], +1)
            apply_pair_deltas(tx, deltas, self.write_batch * 5, unseen)
            tx.run(load_cypher("mark_paired"), uids=[r["passage"] for r in rows]).consume()
            return len(deltas), concepts, False

        total, done = 0, 0
        while max_batches is None or done < max_batches:
            step = self.write_tx(work)
            if step is None:
                return None if done == 0 else total
            pairs, concepts, finished = step
            if finished:  # no passage left: the namespace keeps its pairs from now on
                break
            total += pairs
            done += 1
            if seen is not None:
                seen |= concepts
        return total
