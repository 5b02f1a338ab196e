"""Bringing a namespace written by an earlier version up to the current one, by its first write.

Passage ids: a namespace records the scheme its ids follow (`passage_ids` on its Namespace
node, `indexing.passage_ids.SCHEME`); one without it has the passages of documents whose ids hold
'#' or '%' renamed, under its write lock, before anything else is written. Only those passages'
ids change (every other id reads the same under both schemes), so reads of a namespace that no
writer has touched yet still return valid ids, those it was built with.
"""

from __future__ import annotations

import logging
from typing import Any

from neo4j import ManagedTransaction

from terag_neo4j.core.passage_ids import SCHEME, renamed
from terag_neo4j.store.cypher import cypher_statements
from terag_neo4j.store.ids import passage_uid

log = logging.getLogger(__name__)


def needs_migration(lock_row: dict[str, Any]) -> bool:
    """Whether the namespace `lock_namespace` returned this row for names passages the old way."""
    return int(lock_row.get("passage_ids") or 1) < SCHEME


def migrate_passage_ids_tx(tx: ManagedTransaction, namespace: str) -> int:
    """Rename the namespace's passages to the current id scheme and record it; how many were
    renamed. Run in a transaction that holds the namespace's lock."""
    find, clear, rename, record = cypher_statements("migrate_passage_ids")
    rows = []
    for r in tx.run(find, namespace=namespace):
        new = renamed(r["id"], r["doc_id"], r["position"])
        if new is not None and new != r["id"]:
            rows.append({"node": r["node"], "id": new, "uid": passage_uid(namespace, new)})
    if rows:
        tx.run(clear, rows=rows).consume()
        tx.run(rename, rows=rows).consume()
        log.info("renamed %d passages of %r to the current passage-id scheme", len(rows), namespace)
    tx.run(record, namespace=namespace, scheme=SCHEME).consume()
    return len(rows)
