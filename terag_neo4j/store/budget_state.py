"""Budget mode's state in the graph: which passages are core (chosen for the LLM) and which of
them have their merged concepts, so an interrupted budget run resumes with the same choice
(`store.budget`).
"""

from __future__ import annotations

from collections.abc import Sequence

from neo4j import ManagedTransaction

from terag_neo4j.core.documents import Passage
from terag_neo4j.store.cypher import run_cypher
from terag_neo4j.store.ids import passage_uid
from terag_neo4j.store.sessions import StoreCore, chunks


class BudgetState:
    """Budget mode's core passages and their merge state (`store.budget`)."""

    def __init__(self, core: StoreCore) -> None:
        self.core = core

    def core_state(self, namespace: str) -> tuple[int, dict[str, bool]]:
        """(passages in the namespace, {core passage id: merged})."""
        rows = self.core.read("core_state", namespace=namespace)
        if not rows:
            return 0, {}
        return int(rows[0]["passages"]), {r["id"]: bool(r["merged"]) for r in rows[0]["core"]}

    def mark_core(self, namespace: str, passage_ids: Sequence[str]) -> None:
        """Record the chosen core passages before their extraction is paid for, so an
        interrupted run resumes with the same choice."""
        uids = [passage_uid(namespace, pid) for pid in passage_ids]

        def work(tx: ManagedTransaction) -> None:
            self.core.lock_namespace(tx, namespace)
            for chunk in chunks(uids, self.core.write_batch):
                run_cypher(tx, "mark_core", uids=list(chunk), merged=False).consume()

        self.core.write_tx(work)

    def core_pending(self, namespace: str) -> list[Passage]:
        return [
            Passage(
                r["id"],
                r["doc_id"],
                int(r["position"] or 0),
                r["title"] or "",
                r["text"],
                r["heading"],
            )
            for r in self.core.read("core_pending", namespace=namespace)
        ]

    def concept_types(self, namespace: str, norms: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{normalised name: (type, display name)} of the most frequent non-title concept."""
        out: dict[str, tuple[str, str]] = {}
        for chunk in chunks(sorted(set(norms)), 5000):
            for r in self.core.read("concept_types", namespace=namespace, norms=list(chunk)):
                out.setdefault(r["norm"], (r["type"], r["name"]))
        return out
