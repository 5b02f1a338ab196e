"""Importing a namespace archive (store/archive_format.py): no extraction, no embedding.

Two passes over the archive. The first (`archive_format.verify`) reads every member against the
manifest and refuses a corrupt, truncated, tampered, hostile or newer archive before anything
is written; the target is then checked (the embedding identity it records, whether it holds
passages). The second writes in batches, one transaction each, into the target namespace marked
`importing` (with the import's token) and under a lease of its own. Nothing partial is left:
a failure drops what the import wrote, and a namespace a killed import left marked (its lease
run out, or the same token: a job resumed after kill -9) is dropped by the next import into it,
which then starts over; the import it replaced (a worker that lost its job's lease) writes
nothing more and drops nothing of the new one, fenced by the namespace's epoch. Batches rather
than one transaction keep Neo4j's transaction memory flat; the mark and the drop give the
all-or-nothing a single transaction would.
"""

from __future__ import annotations

import functools
import itertools
import logging
import operator
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neo4j import ManagedTransaction

from terag_neo4j.indexing.lease import held_lease
from terag_neo4j.store import GraphStore, check_namespace
from terag_neo4j.store.archive_format import open_archive, rows, verify
from terag_neo4j.store.archive_rows import ArchiveError, decode_vector
from terag_neo4j.store.cypher import run_cypher
from terag_neo4j.store.ids import passage_label, passage_uid
from terag_neo4j.store.pairs import pair_key
from terag_neo4j.store.search import search_fields
from terag_neo4j.store.sessions import bump_version_tx

log = logging.getLogger(__name__)

# Relationship rows per transaction (passages and concepts go by the store's write_batch)
LINK_BATCH = 5000
# The archive's embedding identity, each with the setting that picks it for a new namespace
IDENTITY = (
    ("model", "embedding_model", "TERAG_EMBEDDING_MODEL"),
    ("dimensions", "embedding_dimensions", "TERAG_EMBEDDING_MODEL (its dimension)"),
    ("query_prefix", "embedding_query_prefix", "TERAG_EMBEDDING_QUERY_PREFIX"),
    ("passage_prefix", "embedding_passage_prefix", "TERAG_EMBEDDING_PASSAGE_PREFIX"),
)


@dataclass
class ImportReport:
    namespace: str
    source: str
    passages: int = 0
    documents: int = 0
    concepts: int = 0
    has_passage: int = 0
    co_occurrence: int = 0
    synonym: int = 0
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)


def _concept_uid(namespace: str, key: str) -> str:
    return f"{namespace}|{key}"  # as ids.concept_uid names a concept of that key


def _batches(it: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in it:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def check_target(store: GraphStore, target: str, manifest: dict[str, Any], token: str) -> bool:
    """Refuse a target that records another embedding identity, holds passages, or is being
    imported by another import now; True when it is a killed import's leftover to drop."""
    found = store.read("import_target", namespace=target)
    if not found:
        return False
    t = found[0]
    emb = manifest["embedding"]
    for key, prop, setting in IDENTITY:
        want, have = emb.get(key), t[prop]
        if have is not None and want is not None and have != want:
            raise ArchiveError(
                f"{setting}: the archive was built with {key} {want!r}, namespace {target!r} "
                f"records {have!r}; import into a new namespace (--namespace NEW)"
            )
    if t["importing"] is not None:
        if t["importing"] != token and t["leased"]:
            raise ArchiveError(f"namespace {target!r} is being imported into now; wait for it")
        return True
    if t["passages"]:
        raise ArchiveError(
            f"namespace {target!r} holds {t['passages']} passages: import into a new namespace "
            f"(--namespace NEW) or drop it first (`terag delete --all -n {target}`)"
        )
    return False


def import_archive(
    store: GraphStore,
    path: Path,
    namespace: str | None = None,
    token: str | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> ImportReport:
    """Import the archive at `path` into `namespace` (default: the one it was exported from).
    `token` names this import (a job passes its id, so a resumed job recognises its own
    leftover)."""
    t0 = time.perf_counter()
    zf, manifest = open_archive(path)
    with zf:
        verify(path, zf, manifest)
        target = check_namespace(namespace or str(manifest.get("namespace") or ""))
        token = token or uuid.uuid4().hex
        report = ImportReport(target, str(manifest.get("namespace")))
        if check_target(store, target, manifest, token):
            log.warning("dropping namespace %r, left unfinished by an import", target)
            store.namespaces.drop(target, keep_job=token)
        with held_lease(store, target, f"import-{token}"), store.writing(target):
            epoch = _begin(store, target, zf, manifest, token)
            try:
                _write(store, target, zf, manifest, report, progress)
                _finish(store, target, zf, token)
            except BaseException:
                # Only the incarnation this import made: a job's next worker, once this one's
                # lease ran out, drops it and imports anew, and that namespace is not ours
                if store.namespaces.drop(target, keep_job=token, epoch=epoch):
                    log.warning("import into %r failed: dropped what it wrote", target)
                else:
                    log.warning("import into %r stopped: another import took it over", target)
                raise
    report.seconds = time.perf_counter() - t0
    report.counts = dict(manifest["counts"])
    log.info(
        "imported %s into %r: %d passages, %d concepts in %.1fs",
        path.name,
        target,
        report.passages,
        report.concepts,
        report.seconds,
    )
    return report


def _begin(
    store: GraphStore, target: str, zf: zipfile.ZipFile, manifest: dict[str, Any], token: str
) -> str:
    """Mark the target as being imported; its epoch, the incarnation this import writes (the
    store's pin refuses every later batch once another import has made the namespace anew)."""
    meta: dict[str, Any] = dict(next(rows(zf, "namespace.jsonl"), {"props": {}})["props"])
    emb = manifest["embedding"]
    meta |= {
        "embedding_model": emb["model"],
        "embedding_dimensions": emb["dimensions"],
        "embedding_query_prefix": emb.get("query_prefix"),
        "embedding_passage_prefix": emb.get("passage_prefix"),
    }
    state = "kept" if manifest.get("cooccurrence") == "kept" else "lazy"

    def work(tx: ManagedTransaction) -> str:
        row = store.lock_row(tx, target)
        run_cypher(
            tx, "import_begin", namespace=target, meta=meta, cooccurrence=state, token=token
        ).consume()
        return str(row["epoch"])

    epoch = store.write_tx(work)
    store.search_indexes.ready.discard(target)
    store.search_indexes.ensure(target, None, lambda: int(emb["dimensions"]))
    return epoch


def _write_batch(store: GraphStore, target: str, name: str, **params: Any) -> int:
    def work(tx: ManagedTransaction) -> int:
        store.lock_row(tx, target)
        rec = run_cypher(tx, name, namespace=target, **params).single()
        return int(rec.data().get("n") or 0) if rec is not None else 0

    return store.write_tx(work)


def _write(
    store: GraphStore,
    target: str,
    zf: zipfile.ZipFile,
    manifest: dict[str, Any],
    report: ImportReport,
    progress: Callable[[str, int], None] | None,
) -> None:
    label = passage_label(target)
    size = store.write_batch
    for batch in _batches(rows(zf, "passages.jsonl"), size):
        out = []
        for r in batch:
            p = r["props"]
            out.append(
                {
                    "uid": passage_uid(target, p["id"]),
                    "props": p,
                    "embedding": decode_vector(r["embedding"]),
                    **search_fields(p.get("title"), p.get("text")),
                }
            )
        report.passages += _write_batch(store, target, "import_passages", rows=out, label=label)
        _tell(progress, "passages", report.passages)
    for batch in _batches(rows(zf, "concepts.jsonl"), size):
        out = [
            {
                "uid": _concept_uid(target, r["props"]["key"]),
                "props": r["props"],
                "embedding": decode_vector(r["embedding"]) if r.get("embedding") else None,
            }
            for r in batch
        ]
        _write_batch(store, target, "import_concepts", rows=out)
        report.concepts += len(out)
        _tell(progress, "concepts", report.concepts)
    for batch in _batches(rows(zf, "has_passage.jsonl"), LINK_BATCH):
        links = _grouped(batch, "passage", "links", functools.partial(_link, target))
        report.has_passage += _linked(store, target, "import_has_passage", links, len(batch))
        _tell(progress, "has_passage", report.has_passage)
    for member, query, value in (
        ("co_occurrence.jsonl", "import_cooccurrence", "count"),
        ("synonym.jsonl", "import_synonyms", "similarity"),
    ):
        for batch in _batches(rows(zf, member), LINK_BATCH):
            pairs = _grouped(batch, "a", "out", functools.partial(_pair, target, value=value))
            n = _linked(store, target, query, pairs, len(batch))
            if member == "synonym.jsonl":
                report.synonym += n
            else:
                report.co_occurrence += n
    report.documents = manifest["counts"].get("documents", 0)


def _grouped(
    batch: list[dict[str, Any]],
    head: str,
    tail: str,
    item: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]],
) -> list[dict[str, Any]]:
    """Consecutive rows of one `head` node as one group, `{head: uid, tail: [items]}`: an export
    writes each passage's links and each concept's pairs together, so one lookup of that node
    serves its whole group (rows in another order still import, in more groups)."""
    runs = itertools.groupby(map(item, batch), key=operator.itemgetter(0))
    return [{head: uid, tail: [it for _, it in run]} for uid, run in runs]


def _link(target: str, r: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    concept = _concept_uid(target, r["concept"])
    return passage_uid(target, r["passage"]), {
        "concept": concept,
        "mention": bool(r.get("mention")),
    }


def _pair(target: str, r: dict[str, Any], *, value: str) -> tuple[str, dict[str, Any]]:
    a, b = _concept_uid(target, r["a"]), _concept_uid(target, r["b"])
    return a, {"b": b, "pair": pair_key(a, b), value: r[value]}


def _linked(
    store: GraphStore, target: str, query: str, out: list[dict[str, Any]], links: int
) -> int:
    n = _write_batch(store, target, query, rows=out)
    if n != links:
        raise ArchiveError(
            f"the archive links {links - n} node(s) it does not hold ({query}): refused, "
            "and what was imported is removed"
        )
    return n


def _finish(store: GraphStore, target: str, zf: zipfile.ZipFile, token: str) -> None:
    runs = [r["props"] for r in rows(zf, "runs.jsonl")]

    def work(tx: ManagedTransaction) -> None:
        store.lock_row(tx, target)
        for run in runs:
            # a run id is unique in the database: the target's name keeps an imported copy apart
            run = {**run, "run_id": f"{target}:{run['run_id']}"}
            run_cypher(tx, "record_run", namespace=target, run=run).consume()
        if run_cypher(tx, "import_finish", namespace=target, token=token).single() is None:
            raise ArchiveError(f"namespace {target!r} was changed by another import meanwhile")
        bump_version_tx(tx, target, None)

    store.write_tx(work)


def _tell(progress: Callable[[str, int], None] | None, what: str, n: int) -> None:
    if progress is not None:
        progress(what, n)
