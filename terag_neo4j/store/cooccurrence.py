"""The lazy CO_OCCURRENCE builder (`store.cooccurrence`): a namespace written without pairs gets
them, in resumable batches, when a walk first needs them."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from neo4j import ManagedTransaction
from neo4j.exceptions import ConstraintError, DatabaseError

from terag_neo4j import tracing
from terag_neo4j.store.cypher import cypher_statements, run_cypher
from terag_neo4j.store.pairs import apply_pair_deltas, pair_deltas
from terag_neo4j.store.sessions import NOTHING_ADDED, StoreCore, bump_version_tx

log = logging.getLogger(__name__)


class Cooccurrence:
    """Building, and resetting, a namespace's CO_OCCURRENCE pairs (`store.cooccurrence`)."""

    def __init__(self, core: StoreCore) -> None:
        self.core = core

    def build(
        self, namespace: str, batch: int | None = None, max_batches: int | None = None
    ) -> int | None:
        """Give a lazy namespace its CO_OCCURRENCE pairs, counted from its HAS_PASSAGE links, and
        keep them from then on. The number of pair updates, or None when they were kept already.

        One transaction per `batch` passages (default: the store's `write_batch`; the whole of 2Wiki in one outgrows Neo4j's
        transaction memory): each marks its passages `paired`, so a killed build resumes where it
        stopped, and writers meanwhile count pairs for marked passages only (`pairs_counted`),
        leaving new ones to the builder. The last batch sets the namespace 'kept'.
        `max_batches` stops after that many transactions; the next call goes on.
        """

        # Concepts of the passages this call has paired: a pair with a concept outside it cannot
        # exist yet, so it is created without a lookup. That holds only while every batch since
        # the build started was this call's (`claim_pair_build.cypher`): after another builder's
        # batch (two first queries at once) or a write, and when resuming a build another call
        # started, it is None and every pair is looked up. The pair key's uniqueness constraint
        # (schema.cypher) refuses a duplicate should that reasoning ever fail: the batch then
        # rolls back and runs again with lookups.
        seen: set[str] | None = None
        size = batch or self.core.write_batch
        builder = uuid.uuid4().hex
        version: int | None = None

        def work(tx: ManagedTransaction) -> tuple[int, set[str], bool, int] | None:
            nonlocal seen
            state = self.core.lock_namespace(tx, namespace)
            if state not in ("lazy", "building"):  # kept, or being reset (`reset`)
                return None
            claim = run_cypher(
                tx,
                "claim_pair_build",
                namespace=namespace,
                builder=builder,
                version=version,
            ).single()
            if state == "lazy":
                run_cypher(tx, "set_cooccurrence", namespace=namespace, state="building").consume()
                seen = set()
            elif claim is None or not claim["continued"]:
                seen = None
            at = int(claim["version"]) if claim else 0
            rows = [
                r.data()
                for r in run_cypher(tx, "unpaired_passages", namespace=namespace, limit=size)
            ]
            if not rows:
                run_cypher(tx, "set_cooccurrence", namespace=namespace, state="kept").consume()
                bump_version_tx(tx, namespace, None, NOTHING_ADDED)
                return 0, set(), True, at
            concepts = {c for r in rows for c in r["concepts"]}
            unseen = frozenset(concepts - seen) if seen is not None else frozenset()
            deltas = pair_deltas([r["concepts"] for r in rows], +1)
            apply_pair_deltas(tx, deltas, self.core.write_batch * 5, unseen)
            run_cypher(tx, "mark_paired", uids=[r["passage"] for r in rows]).consume()
            return len(deltas), concepts, False, at

        total, done = 0, 0
        while max_batches is None or done < max_batches:
            try:
                step = self.core.write_tx(work)
            except ConstraintError:
                if seen is None:
                    raise
                log.warning(
                    "a CO_OCCURRENCE pair of %r existed already; looking pairs up", namespace
                )
                seen = None  # the batch rolled back: run it again, looking every pair up
                continue
            if step is None:
                return None if done == 0 else total
            pairs, concepts, finished, version = step
            if finished:  # no passage left: the namespace keeps its pairs from now on
                break
            total += pairs
            done += 1
            if seen is not None:
                seen |= concepts
        return total

    def ensure_schema(self) -> None:
        """The core's schema (`schema.cypher`), after resetting namespaces whose duplicate pairs
        keep the pair key's uniqueness constraint from being created (see `reset`)."""
        try:
            self.core.create_schema()
        except DatabaseError as e:
            if not (e.code or "").endswith("Schema.ConstraintCreationFailed"):
                raise
            for r in self.core.read("duplicate_pair_namespaces"):
                self.reset(r["namespace"])
            self.core.create_schema()
        for r in self.core.read("resetting_namespaces"):
            self.reset(r["namespace"])  # one whose reset was interrupted

    def reset(self, namespace: str) -> None:
        """Remove a namespace's CO_OCCURRENCE pairs and make it lazy again: the next walk that
        reads pairs builds them anew (one edge per pair). For namespaces that concurrent lazy
        builds of earlier versions left with duplicate pairs; pairs are derived data, so
        nothing is lost. Writers leave pairs alone meanwhile (state 'resetting')."""
        log.warning(
            "namespace %r has CO_OCCURRENCE pairs with several edges (concurrent lazy builds of "
            "an earlier version): removing its pairs; the next walk over them builds them again",
            namespace,
        )

        def mark(state: str) -> Callable[[ManagedTransaction], None]:
            def work(tx: ManagedTransaction) -> None:
                self.core.lock_namespace(tx, namespace)
                run_cypher(tx, "set_cooccurrence", namespace=namespace, state=state).consume()
                bump_version_tx(tx, namespace, None, NOTHING_ADDED)

            return work

        self.core.write_tx(mark("resetting"))

        def run() -> None:  # batched deletes: a retry continues where the last one stopped
            timeout = self.core.bulk_timeout_s
            with self.core.session(timeout_s=timeout) as s, tracing.statement("reset_cooccurrence"):
                for stmt in cypher_statements("reset_cooccurrence"):
                    s.run(stmt, namespace=namespace).consume()

        self.core.call(run)
        self.core.write_tx(mark("lazy"))
