"""Namespace administration: list, describe and drop namespaces, their version, ingest lease
and ingest-run records, and a fingerprint of a namespace's whole graph (`store.namespaces`;
requiring a namespace is the core's, `StoreCore.require_namespace`, as every component needs it).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from neo4j import ManagedTransaction
from neo4j.exceptions import ClientError

from terag_neo4j import tracing
from terag_neo4j.store.cypher import cypher_statements, run_cypher
from terag_neo4j.store.ids import check_namespace, projection_name_re
from terag_neo4j.store.search import SearchIndexes
from terag_neo4j.store.sessions import StoreCore, bump_version_tx


@dataclass
class NamespaceInfo:
    name: str
    version: int
    passages: int
    concepts: int
    extractor: str | None = None
    model: str | None = None
    created: str | None = None
    updated: str | None = None
    entities: int = 0
    has_passage: int = 0
    co_occurrence: int = 0
    # 'kept' (every write keeps the pairs) or 'lazy' (none yet: built on first use)
    cooccurrence: str = "kept"
    runs: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    # Extractions whose LLM server sent no token counts: the tokens above leave them out
    tokens_unknown: int = 0
    # The namespace's GDS projections in memory: name, MB, nodes, relationships
    projections: list[dict[str, Any]] = field(default_factory=list)
    documents: int = 0  # distinct document ids of its passages


class Namespaces:
    """The namespaces of the database (`store.namespaces`); dropping one drops its search
    indexes first, so it is given them."""

    def __init__(self, core: StoreCore, search_indexes: SearchIndexes) -> None:
        self.core = core
        self.search_indexes = search_indexes

    def bump_version(self, namespace: str, meta: dict[str, Any] | None = None) -> int:
        def work(tx: ManagedTransaction) -> int:
            self.core.lock_namespace(tx, namespace)
            return bump_version_tx(tx, namespace, meta)

        return self.core.write_tx(work)

    def record_run(self, namespace: str, run: dict[str, Any]) -> None:
        self.core.write_tx(
            lambda tx: run_cypher(tx, "record_run", namespace=namespace, run=run).consume()
        )

    def ingest_lease(self, namespace: str, seconds: float, run_id: str = "manual") -> None:
        """Hold for `seconds` (or, with 0, give back) the ingest lease of run `run_id` on the
        namespace (`ingest_lease.cypher`)."""
        name = "ingest_lease" if seconds > 0 else "release_lease"
        self.core.write_tx(
            lambda tx: run_cypher(
                tx, name, namespace=namespace, seconds=int(seconds), run_id=run_id
            ).consume()
        )

    def drop(self, namespace: str, keep_job: str | None = None, epoch: str | None = None) -> bool:
        """Mark the namespace as being dropped (under its write lock: a running ingest's batch
        finishes first, its next one is refused), drop its indexes, then delete its graph. Its
        unfinished jobs fail, but for `keep_job` (the import job that drops it). With `epoch`,
        only that incarnation of it is dropped: False, and nothing done, when the namespace is
        another one now (or gone)."""

        token = uuid.uuid4().hex

        def mark(tx: ManagedTransaction) -> bool:
            rec = run_cypher(
                tx, "mark_dropping", namespace=namespace, epoch=epoch, token=token
            ).single()
            return rec is not None

        marked = self.core.write_tx(mark)
        if not marked and epoch is not None:
            return False
        if marked and not self._owns_drop(namespace, token):
            return True  # a later drop took it over (its own deletes and index drops follow)
        self.search_indexes.drop(namespace)

        def run() -> None:  # batched deletes: a retry continues where the last one stopped
            timeout = self.core.bulk_timeout_s
            params = {"namespace": namespace, "keep_job": keep_job, "token": token}
            with self.core.session(timeout_s=timeout) as s, tracing.statement("drop_namespace"):
                for stmt in cypher_statements("drop_namespace"):
                    s.run(stmt, params, marked=marked).consume()

        self.core.call(run)
        return True

    def _owns_drop(self, namespace: str, token: str) -> bool:
        """Whether the namespace's node still carries this drop's token: a drop that stalled
        after marking, and woke after another drop and a new import, must not drop the new
        namespace's indexes (its deletes check the token on every row)."""
        rows = self.core.read("namespace_drop_token", namespace=namespace)
        return bool(rows) and rows[0]["token"] == token

    def all(self) -> list[NamespaceInfo]:
        return [
            NamespaceInfo(
                name=r["name"],
                version=r["version"] or 0,
                passages=r["passages"] or 0,
                concepts=r["concepts"] or 0,
                extractor=r["extractor"],
                model=r["model"],
                created=r["created"],
                updated=r["updated"],
                input_tokens=r["input_tokens"] or 0,
                output_tokens=r["output_tokens"] or 0,
                tokens_unknown=r["tokens_unknown"] or 0,
            )
            for r in self.core.read("namespaces")
        ]

    def exists(self, namespace: str) -> bool:
        return bool(self.core.read("namespace_version", namespace=namespace))

    def describe(self, namespace: str) -> NamespaceInfo:
        check_namespace(namespace)
        rows = self.core.read("describe_namespace", namespace=namespace)
        if not rows:
            self.core.require_namespace(namespace)
        r = rows[0]
        runs = [
            {k: (str(v) if hasattr(v, "iso_format") else v) for k, v in run.items()}
            for run in r["runs"]
        ]
        return NamespaceInfo(
            name=r["name"],
            version=r["version"] or 0,
            passages=r["passages"],
            documents=r["documents"],
            concepts=r["concepts"],
            extractor=r["extractor"],
            model=r["model"],
            created=r["created"],
            updated=r["updated"],
            entities=r["entities"],
            has_passage=r["has_passage"],
            co_occurrence=r["co_occurrence"],
            cooccurrence=r["cooccurrence"],
            runs=runs,
            # What the graph's extraction cost, including extractions a run took from the cache
            # (a resumed or rebuilt ingest); runs that skipped unchanged passages add nothing.
            input_tokens=sum(
                int(x.get("input_tokens") or 0) + int(x.get("cached_input_tokens") or 0)
                for x in runs
            ),
            output_tokens=sum(
                int(x.get("output_tokens") or 0) + int(x.get("cached_output_tokens") or 0)
                for x in runs
            ),
            tokens_unknown=sum(int(x.get("tokens_unknown") or 0) for x in runs),
            projections=self.projections_in_memory(namespace),
        )

    def projections_in_memory(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's GDS projections and the memory they take (none without GDS)."""
        pattern = projection_name_re(namespace)
        try:
            rows = self.core.read("gds_graphs", prefix=f"terag_{namespace}_")
        except ClientError:  # no GDS in this Neo4j: nothing is projected
            return []
        return [
            {
                "graph": r["graphName"],
                "mb": round(int(r["sizeInBytes"] or 0) / 2**20, 1),
                "nodes": r["nodeCount"],
                "relationships": r["relationshipCount"],
            }
            for r in rows
            if pattern.fullmatch(r["graphName"])
        ]

    def fingerprint(self, namespace: str) -> str:
        """A hash of the whole namespace graph: equal before and after an idempotent re-ingest."""
        rows = self.core.read("fingerprint", namespace=namespace)
        h = hashlib.sha256()
        for part in ("passages", "concepts", "links", "cooc"):
            for item in sorted(rows[0][part]):
                h.update(item.encode())
                h.update(b"\n")
            h.update(b"|")
        return h.hexdigest()
