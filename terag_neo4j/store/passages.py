"""Passage writes (`store.passages`): add, replace (budget mode's merged concepts) and delete
passages, each in one transaction that keeps concept frequencies, CO_OCCURRENCE counts and the
namespace version right, and grounding's links and lookups.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from neo4j import ManagedTransaction

from terag_neo4j.core.concepts import Concept, Extraction
from terag_neo4j.core.documents import Passage
from terag_neo4j.core.provenance import Provenance
from terag_neo4j.store.cypher import run_cypher
from terag_neo4j.store.ids import concept_uid, passage_label, passage_uid
from terag_neo4j.store.pairs import (
    apply_pair_deltas,
    pair_deltas,
    pair_key,
    pairs_counted,
    pairs_of,
)
from terag_neo4j.store.search import search_fields
from terag_neo4j.store.sessions import NOTHING_ADDED, StoreCore, bump_version_tx, chunks


@dataclass
class WriteStats:
    passages: int = 0
    concepts_touched: int = 0
    has_passage: int = 0
    cooccurrence_rows: int = 0
    deleted_passages: int = 0
    concepts_created: int = 0


def passage_provenance(p: Passage) -> Provenance:
    """What a passage's `Provenance` is when it is read back (an empty source is none)."""
    return Provenance(
        p.source or None, p.heading_path, p.page_start, p.page_end, p.char_start, p.char_end
    )


def provenance_row(p: Passage) -> dict[str, Any]:
    """The provenance properties a write sets on a passage's node."""
    return passage_provenance(p).to_dict()


def _concept_row(uid: str, c: Concept, vectors: dict[str, Sequence[float]]) -> dict[str, Any]:
    return {
        "uid": uid,
        "key": c.key,
        "type": c.type,
        "norm": c.norm,
        "stem": c.stem,
        "name": c.name,
        "kind": "entity" if c.is_entity else "concept",
        # absent: written when first needed (concept_vectors.py)
        "embedding": list(map(float, vectors[c.key])) if c.key in vectors else None,
    }


def delete_passages_tx(tx: ManagedTransaction, uids: Sequence[str], state: str) -> int:
    if not uids:
        return 0
    rows = [r.data() for r in run_cypher(tx, "passage_concepts", uids=list(uids))]
    lists = [r["linked"] for r in rows]  # extracted and mentioned: both change frequencies
    counted = [r["concepts"] for r in rows if pairs_counted(state, r["paired"])]
    apply_pair_deltas(tx, pair_deltas(counted, -1), 5000)
    run_cypher(tx, "delete_passages", uids=list(uids)).consume()
    touched = sorted({c for cs in lists for c in cs})
    for chunk in chunks(touched, 5000):
        run_cypher(tx, "prune_concepts", uids=chunk).consume()
    return len(rows)


class Passages:
    """Passage writes and grounding's lookups (`store.passages`)."""

    def __init__(self, core: StoreCore) -> None:
        self.core = core

    def write(
        self,
        namespace: str,
        passages: Sequence[Passage],
        extractions: Sequence[Extraction],
        passage_vectors: Sequence[Sequence[float]],
        concept_vectors: dict[str, Sequence[float]],
        meta: dict[str, Any] | None = None,
    ) -> WriteStats:
        """Add passages with their concepts in ONE transaction.

        Inside it, passages already present with the same hash are skipped and changed ones are
        replaced, so a rerun (even after a crash between batches) never counts a passage twice.
        The namespace version is bumped in the same transaction when anything changed, so a GDS
        projection built before this batch is never used after it (`meta` is stored with it).
        """
        by_id = {e.passage_id: e for e in extractions}
        vec_by_id = {p.id: v for p, v in zip(passages, passage_vectors, strict=True)}

        def work(tx: ManagedTransaction) -> WriteStats:
            stats = WriteStats()
            lock = self.core.lock_row(tx, namespace)
            state = str(lock["cooccurrence"])
            uids = [passage_uid(namespace, p.id) for p in passages]
            present = {r["id"]: r["hash"] for r in run_cypher(tx, "existing_passages", uids=uids)}
            changed = [p for p in passages if p.id in present and present[p.id] != p.hash]
            if changed:
                stats.deleted_passages += delete_passages_tx(
                    tx, [passage_uid(namespace, p.id) for p in changed], state
                )
            new = [p for p in passages if present.get(p.id) != p.hash]
            if not new:
                if stats.deleted_passages:
                    bump_version_tx(tx, namespace, meta)
                return stats
            # While pairs are lazy or being built, a new passage is left to the builder.
            since = int(lock.get("version") or 0) + 1  # the version this write bumps to
            self._write_new_tx(
                tx, namespace, new, by_id, vec_by_id, concept_vectors, stats, state == "kept", since
            )
            added = None if changed else (stats.passages, stats.concepts_created)
            bump_version_tx(tx, namespace, meta, added)
            return stats

        return self.core.write_tx(work)

    def replace(
        self,
        namespace: str,
        passages: Sequence[Passage],
        extractions: Sequence[Extraction],
        concept_vectors: dict[str, Sequence[float]],
        meta: dict[str, Any] | None = None,
    ) -> WriteStats:
        """Give passages new concepts (budget mode's merged extractions) in ONE transaction.

        Only the difference is written: links of concepts a passage loses go, links of concepts
        it gains are made (creating concepts new to the graph), and co-occurrence counts change
        by the pairs gained or lost, so adding a few LLM names to a passage costs those pairs,
        not the passage's whole square. The passage is marked merged; one already marked, or
        gone meanwhile, is left alone, so a rerun changes nothing.
        """
        by_id = {e.passage_id: e for e in extractions}

        def work(tx: ManagedTransaction) -> WriteStats:
            stats = WriteStats()
            state = self.core.lock_namespace(tx, namespace)
            uids = [passage_uid(namespace, p.id) for p in passages]
            pending = {r["id"]: r["hash"] for r in run_cypher(tx, "core_unmerged", uids=uids)}
            todo = [p for p in passages if pending.get(p.id) == p.hash]
            if not todo:
                return stats
            todo_uids = [passage_uid(namespace, p.id) for p in todo]
            held = [r.data() for r in run_cypher(tx, "passage_concepts", uids=todo_uids)]
            old = {r["passage"]: set(r["concepts"]) for r in held}
            paired = {r["passage"] for r in held if pairs_counted(state, r["paired"])}
            concept_rows: dict[str, dict[str, Any]] = {}
            gained: list[dict[str, Any]] = []
            lost: list[dict[str, Any]] = []
            counts: list[dict[str, Any]] = []
            pair_delta: Counter[tuple[str, str]] = Counter()
            for p, pu in zip(todo, todo_uids, strict=True):
                new: set[str] = set()
                for c in by_id[p.id].concepts:
                    cu = concept_uid(namespace, c)
                    new.add(cu)
                    concept_rows.setdefault(cu, _concept_row(cu, c, concept_vectors))
                before = old.get(pu, set())
                gained.append({"passage": pu, "concepts": sorted(new - before)})
                lost.append({"passage": pu, "concepts": sorted(before - new)})
                counts.append({"passage": pu, "count": len(new)})
                if pu in paired:
                    pair_delta.update(pairs_of(new) - pairs_of(before))
                    pair_delta.subtract(pairs_of(before) - pairs_of(new))
            gained_uids = {c for g in gained for c in g["concepts"]}
            wanted = [cu for cu in concept_rows if cu in gained_uids]
            existing: set[str] = set()
            for chunk in chunks(wanted, self.core.write_batch * 5):
                existing.update(
                    r["uid"] for r in run_cypher(tx, "existing_concepts", uids=list(chunk))
                )
            created = frozenset(wanted) - existing
            crow = [concept_rows[cu] for cu in wanted if cu in created]
            for rows in chunks(crow, self.core.write_batch):
                run_cypher(tx, "upsert_concepts", rows=rows, namespace=namespace).consume()
            for rows in chunks(lost, self.core.write_batch):
                run_cypher(tx, "unlink_passages", rows=rows).consume()
            for rows in chunks(gained, self.core.write_batch):
                run_cypher(tx, "link_passages", rows=rows).consume()
            pairs = [
                {"a": a, "b": b, "pair": pair_key(a, b), "delta": d}
                for (a, b), d in pair_delta.items()
                if d
            ]
            apply_pair_deltas(tx, pairs, self.core.write_batch * 5, created)
            touched = sorted(gained_uids | {c for x in lost for c in x["concepts"]})
            for chunk in chunks(touched, self.core.write_batch * 5):
                run_cypher(tx, "prune_concepts", uids=list(chunk)).consume()
            for rows in chunks(counts, self.core.write_batch):
                run_cypher(tx, "set_concept_count", rows=rows).consume()
            run_cypher(tx, "mark_core", uids=todo_uids, merged=True).consume()
            stats.passages = len(todo)
            stats.concepts_touched = len(touched)
            stats.has_passage = sum(len(g["concepts"]) for g in gained)
            stats.cooccurrence_rows = len(pairs)
            bump_version_tx(tx, namespace, meta)
            return stats

        return self.core.write_tx(work)

    def _write_new_tx(
        self,
        tx: ManagedTransaction,
        namespace: str,
        new: Sequence[Passage],
        by_id: dict[str, Extraction],
        vec_by_id: dict[str, Sequence[float]],
        concept_vectors: dict[str, Sequence[float]],
        stats: WriteStats,
        pairs_kept: bool = True,
        since: int = 0,
    ) -> None:
        """Write passages that are not in the graph, with their concepts, links and counts
        (CO_OCCURRENCE counts only when the namespace keeps them)."""
        concept_rows: dict[str, dict[str, Any]] = {}
        links: list[dict[str, Any]] = []
        for p in new:
            cuids = []
            for c in by_id[p.id].concepts:
                cu = concept_uid(namespace, c)
                cuids.append(cu)
                if cu not in concept_rows:
                    concept_rows[cu] = _concept_row(cu, c, concept_vectors)
            links.append({"passage": passage_uid(namespace, p.id), "concepts": cuids})
        prow = [
            {
                "uid": passage_uid(namespace, p.id),
                "id": p.id,
                "doc_id": p.doc_id,
                "position": p.position,
                "title": p.title,
                "heading": p.heading,
                "text": p.text,
                "hash": p.hash,
                "concept_count": len(by_id[p.id].concepts),
                "provenance": provenance_row(p),
                "embedding": list(map(float, vec_by_id[p.id])),
                **search_fields(p.title, p.text),
            }
            for p in new
        ]
        label = passage_label(namespace)
        for rows in chunks(prow, self.core.write_batch):
            run_cypher(
                tx,
                "upsert_passages",
                rows=rows,
                namespace=namespace,
                label=label,
                since=since,
            ).consume()
        existing: set[str] = set()
        for uids_chunk in chunks(list(concept_rows), self.core.write_batch * 5):
            existing.update(r["uid"] for r in run_cypher(tx, "existing_concepts", uids=uids_chunk))
        created = frozenset(concept_rows) - existing
        crow = [row for uid, row in concept_rows.items() if uid in created]
        for rows in chunks(crow, self.core.write_batch):
            run_cypher(tx, "upsert_concepts", rows=rows, namespace=namespace).consume()
        for rows in chunks(links, self.core.write_batch):
            run_cypher(tx, "link_passages", rows=rows).consume()  # frequencies too
        pairs = pair_deltas([link["concepts"] for link in links], +1) if pairs_kept else []
        apply_pair_deltas(tx, pairs, self.core.write_batch * 5, created)
        stats.passages += len(new)
        stats.concepts_created += len(created)
        stats.concepts_touched += len(concept_rows)
        stats.has_passage += sum(len(link["concepts"]) for link in links)
        stats.cooccurrence_rows += len(pairs)

    def link_mentions(self, namespace: str, rows: Sequence[dict[str, Any]]) -> int:
        """Link passages to the concepts they name (`grounding.py`; rows `{passage, concepts}`
        of uids) in one transaction, fix the concepts' frequencies and bump the version when
        anything was added. Links that exist stay as they are; returns the links added."""

        def work(tx: ManagedTransaction) -> int:
            self.core.lock_namespace(tx, namespace)
            added = 0
            for chunk in chunks(list(rows), self.core.write_batch):
                rec = run_cypher(tx, "link_mentions", rows=list(chunk)).single()
                added += int(rec["links"] or 0) if rec else 0
            if added:
                bump_version_tx(tx, namespace, None, NOTHING_ADDED)
            return added

        return self.core.write_tx(work)

    def ungrounded(self, namespace: str, passage_ids: Sequence[str]) -> set[str]:
        """Which of these passages have not been linked to the concepts they name yet."""
        out: set[str] = set()
        for chunk in chunks(list(passage_ids), 5000):
            uids = [passage_uid(namespace, pid) for pid in chunk]
            out.update(r["id"] for r in self.core.read("ungrounded_passages", uids=uids))
        return out

    def concept_vocabulary(
        self, namespace: str, norms: Sequence[str] | None = None
    ) -> dict[str, list[str]]:
        """{normalised name: concept uids} of the namespace: all of it, or for these names."""
        out: dict[str, list[str]] = {}
        if norms is None:
            rows = self.core.read("concept_names", namespace=namespace)
        else:
            rows = []
            for chunk in chunks(sorted(set(norms)), 20_000):
                rows += self.core.read("concepts_named", namespace=namespace, norms=list(chunk))
        for r in rows:
            out.setdefault(r["norm"], []).append(r["uid"])
        return out

    def concept_prefixes(
        self, namespace: str, prefixes: Sequence[str]
    ) -> dict[str, tuple[list[str], bool]]:
        """{prefix: (uids of the concepts so named, whether it begins a longer name)} for the
        `prefixes` that are either (`concept_prefixes.cypher`)."""
        out: dict[str, tuple[list[str], bool]] = {}
        for chunk in chunks(list(prefixes), 20_000):
            for r in self.core.read("concept_prefixes", namespace=namespace, prefixes=list(chunk)):
                out[r["prefix"]] = (list(r["uids"]), bool(r["longer"]))
        return out

    def delete(
        self, namespace: str, passage_ids: Sequence[str], meta: dict[str, Any] | None = None
    ) -> int:
        """Remove passages (fixing counts and co-occurrences) and bump the version, in one go."""
        if not passage_ids:
            return 0

        def work(tx: ManagedTransaction) -> int:
            state = self.core.lock_namespace(tx, namespace)
            n = delete_passages_tx(tx, [passage_uid(namespace, pid) for pid in passage_ids], state)
            if n:
                bump_version_tx(tx, namespace, meta)
            return n

        return self.core.write_tx(work)
