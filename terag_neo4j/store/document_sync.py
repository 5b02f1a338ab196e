"""Documents kept in step with their files (`store.documents`): which documents and passages are
present with what content and provenance, provenance of passages that only moved, the documents
read from under a folder, and deleting a document."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from neo4j import ManagedTransaction

from terag_neo4j.core.documents import Passage
from terag_neo4j.core.provenance import Provenance
from terag_neo4j.store.cypher import run_cypher
from terag_neo4j.store.ids import passage_uid
from terag_neo4j.store.passages import delete_passages_tx, provenance_row
from terag_neo4j.store.sessions import StoreCore, bump_version_tx, chunks


class Documents:
    """The namespace's documents, as the passages that carry their ids (`store.documents`)."""

    def __init__(self, core: StoreCore) -> None:
        self.core = core

    def present(self, namespace: str, doc_ids: Sequence[str]) -> set[str]:
        """Which of these document ids the namespace holds passages of."""
        present: set[str] = set()
        for chunk in chunks(sorted(set(doc_ids)), 5000):
            rows = self.core.read("documents_present", namespace=namespace, doc_ids=list(chunk))
            present.update(r["doc_id"] for r in rows)
        return present

    def delete(self, namespace: str, doc_id: str) -> int:
        """Remove a document's passages, concepts left without passages, and fix all counts."""
        self.core.require_namespace(namespace)

        def work(tx: ManagedTransaction) -> int:
            state = self.core.lock_namespace(tx, namespace)
            uids = [
                r["uid"]
                for r in run_cypher(tx, "document_passages", namespace=namespace, doc_id=doc_id)
            ]
            n = delete_passages_tx(tx, uids, state)
            if n:
                bump_version_tx(tx, namespace, None)
            return n

        return self.core.write_tx(work)

    def present_passages(
        self, namespace: str, passage_ids: Sequence[str]
    ) -> dict[str, tuple[str, Provenance]]:
        """The passages of these ids the namespace holds: content hash and provenance."""
        out: dict[str, tuple[str, Provenance]] = {}
        for chunk in chunks(list(passage_ids), 5000):
            uids = [passage_uid(namespace, pid) for pid in chunk]
            for r in self.core.read("existing_passages", uids=uids):
                out[r["id"]] = (r["hash"], Provenance.from_map(r["provenance"]))
        return out

    def set_provenance(self, namespace: str, passages: Sequence[Passage]) -> int:
        """Write the provenance of passages whose text is unchanged (no version bump: the graph
        the walk runs on is the same)."""
        rows = [
            {"uid": passage_uid(namespace, p.id), "provenance": provenance_row(p)} for p in passages
        ]

        def work(tx: ManagedTransaction) -> int:
            for chunk in chunks(rows, 5000):
                run_cypher(tx, "set_provenance", rows=chunk).consume()
            return len(rows)

        return self.core.write_tx(work) if rows else 0

    def stale_by_document(
        self, namespace: str, doc_ids: Sequence[str], keep: Sequence[str]
    ) -> dict[str, list[str]]:
        """Per document, the ids of passages it has in the graph but not in `keep`."""
        wanted = set(keep)
        stale: dict[str, list[str]] = defaultdict(list)
        for chunk in chunks(sorted(set(doc_ids)), 5000):
            for r in self.core.read(
                "document_passage_ids", namespace=namespace, doc_ids=list(chunk)
            ):
                if r["id"] not in wanted:
                    stale[r["doc_id"]].append(r["id"])
        return {d: sorted(ids) for d, ids in stale.items()}

    def under(self, namespace: str, prefix: str) -> dict[str, str | None]:
        """Document id -> source of the namespace's documents read from under `prefix`."""
        rows = self.core.read("documents_under", namespace=namespace, prefix=prefix)
        return {r["doc_id"]: r["source"] for r in rows}
