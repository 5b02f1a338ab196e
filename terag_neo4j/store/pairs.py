"""CO_OCCURRENCE bookkeeping: one edge per concept pair, counting the passages they share.

Writers and the lazy builder change counts by deltas computed here; a pair whose count drops to
zero is deleted, so the edges always equal what the HAS_PASSAGE links imply.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from neo4j import ManagedTransaction

from terag_neo4j.store.cypher import run_cypher
from terag_neo4j.store.sessions import chunks


def pair_key(a: str, b: str) -> int:
    """The index key of an unordered concept pair: a 64-bit hash, far smaller than the uids."""
    digest = hashlib.blake2b(f"{a}~{b}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def pair_deltas(concept_lists: Sequence[Sequence[str]], sign: int) -> list[dict[str, Any]]:
    # Aggregating in Python first turns N passages x k^2 pairs into one row per distinct pair.
    counts: Counter[tuple[str, str]] = Counter()
    for uids in concept_lists:
        for a, b in combinations(sorted(set(uids)), 2):
            counts[(a, b)] += 1
    return [
        {"a": a, "b": b, "pair": pair_key(a, b), "delta": sign * n} for (a, b), n in counts.items()
    ]


def pairs_of(uids: set[str]) -> Counter[tuple[str, str]]:
    return Counter(combinations(sorted(uids), 2))


def pairs_counted(state: str, paired: bool | None) -> bool:
    """Whether a passage's pairs are in the CO_OCCURRENCE counts (see `StoreCore.lock_namespace`)."""
    return state == "kept" or (state == "building" and bool(paired))


def apply_pair_deltas(
    tx: ManagedTransaction,
    rows: Sequence[dict[str, Any]],
    batch: int,
    new_concepts: frozenset[str] = frozenset(),
) -> None:
    """Add `delta` to each pair's count, creating missing pairs and deleting emptied ones.

    A pair with a concept created in this transaction cannot exist yet, so it skips the lookup.
    """
    fresh = [r for r in rows if r["a"] in new_concepts or r["b"] in new_concepts]
    known = [r for r in rows if not (r["a"] in new_concepts or r["b"] in new_concepts)]
    for chunk in chunks(known, batch):
        existed = {r["pair"] for r in run_cypher(tx, "add_cooccurrence", rows=chunk)}
        fresh.extend(r for r in chunk if r["pair"] not in existed and r["delta"] > 0)
        emptied = [r["pair"] for r in chunk if r["delta"] < 0]
        if emptied:
            run_cypher(tx, "prune_cooccurrence", pairs=emptied).consume()
    for chunk in chunks(fresh, batch):
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in chunk:
            groups.setdefault(r["a"], []).append(
                {"b": r["b"], "pair": r["pair"], "delta": r["delta"]}
            )
        run_cypher(
            tx,
            "create_cooccurrence",
            groups=[{"a": a, "rows": rows} for a, rows in groups.items()],
        ).consume()
