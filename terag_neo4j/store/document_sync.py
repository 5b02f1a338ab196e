"""Keeping documents in step with their files: which passages are present with what content and
provenance, provenance of passages that only moved, and the documents read from under a folder."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from neo4j import ManagedTransaction

from terag_neo4j.core.documents import Passage
from terag_neo4j.core.provenance import Provenance
from terag_neo4j.store.cypher import load_cypher
from terag_neo4j.store.ids import passage_uid
from terag_neo4j.store.sessions import StoreCore, chunks


def passage_provenance(p: Passage) -> Provenance:
    """What a passage's `Provenance` is when it is read back (an empty source is none)."""
    return Provenance(
        p.source or None, p.heading_path, p.page_start, p.page_end, p.char_start, p.char_end
    )


def provenance_row(p: Passage) -> dict[str, Any]:
    """The provenance properties a write sets on a passage's node."""
    return passage_provenance(p).to_dict()


class DocumentSync(StoreCore):
    def present_passages(
        self, namespace: str, passage_ids: Sequence[str]
    ) -> dict[str, tuple[str, Provenance]]:
        """The passages of these ids the namespace holds: content hash and provenance."""
        out: dict[str, tuple[str, Provenance]] = {}
        for chunk in chunks(list(passage_ids), 5000):
            uids = [passage_uid(namespace, pid) for pid in chunk]
            for r in self.read("existing_passages", uids=uids):
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
                tx.run(load_cypher("set_provenance"), rows=chunk).consume()
            return len(rows)

        return self.write_tx(work) if rows else 0

    def stale_by_document(
        self, namespace: str, doc_ids: Sequence[str], keep: Sequence[str]
    ) -> dict[str, list[str]]:
        """Per document, the ids of passages it has in the graph but not in `keep`."""
        wanted = set(keep)
        stale: dict[str, list[str]] = defaultdict(list)
        for chunk in chunks(sorted(set(doc_ids)), 5000):
            for r in self.read("document_passage_ids", namespace=namespace, doc_ids=list(chunk)):
                if r["id"] not in wanted:
                    stale[r["doc_id"]].append(r["id"])
        return {d: sorted(ids) for d, ids in stale.items()}

    def documents_under(self, namespace: str, prefix: str) -> dict[str, str | None]:
        """Document id -> source of the namespace's documents read from under `prefix`."""
        rows = self.read("documents_under", namespace=namespace, prefix=prefix)
        return {r["doc_id"]: r["source"] for r in rows}
