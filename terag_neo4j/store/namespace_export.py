"""Exporting a namespace as an archive (store/archive_format.py), as a stream of bytes.

Each member is one read query whose records the driver fetches in batches as they are written
out, so memory holds a batch of rows and the zip's compressor, whatever the namespace's size.
A namespace whose CO_OCCURRENCE pairs are not kept (lazy, or a build under way) is exported
lazy, without pairs: the importing side builds them on first use as the source would.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from terag_neo4j.store.archive_format import FORMAT, FORMAT_VERSION, ArchiveWriter
from terag_neo4j.store.archive_rows import NAMESPACE_RESERVED, encode_vector, jsonable
from terag_neo4j.store.cypher import run_cypher
from terag_neo4j.store.ids import uid_bounds
from terag_neo4j.store.sessions import StoreCore

log = logging.getLogger(__name__)

# The driver's records per fetch while a member streams (each passage carries its vector)
FETCH_SIZE = 500
# A source concept's pairs per record: a hub's pairs come in records of this many
PAIR_CHUNK = 500
# Nodes per statement: each member is read in pages of this many, in uid order, so no statement
# runs long whatever the namespace's size (one statement for a 1M-passage namespace's passages
# ran past the 300 s statement timeout)
PAGE = 1000


def _clean(props: dict[str, Any]) -> dict[str, Any]:
    return {k: jsonable(v) for k, v in props.items() if v is not None}


def export_stream(
    store: StoreCore,
    namespace: str,
    terag_version: str,
    preset: dict[str, Any] | None = None,
) -> Iterator[bytes]:
    """The archive of `namespace`, chunk by chunk (raises NamespaceNotFound first)."""
    store.require_namespace(namespace)
    w = ArchiveWriter()
    with store.session(read=True) as s:
        head = run_cypher(s, "export_namespace", namespace=namespace).single()
        assert head is not None  # required above
        record = dict(head["props"])
        pairs_kept = (record.get("cooccurrence") or "kept") == "kept"
        meta = {k: jsonable(v) for k, v in record.items() if k not in NAMESPACE_RESERVED}
        w.add("namespace.jsonl", {"props": {k: v for k, v in meta.items() if v is not None}})
        tokens = {"input": 0, "output": 0}
        runs = [_clean(dict(r)) for r in head["runs"]]
        for run in runs:
            tokens["input"] += int(run.get("input_tokens") or 0)
            tokens["input"] += int(run.get("cached_input_tokens") or 0)
            tokens["output"] += int(run.get("output_tokens") or 0)
            tokens["output"] += int(run.get("cached_output_tokens") or 0)
        yield w.take()

        def stream(query: str, **params: Any) -> Iterator[dict[str, Any]]:
            after, end = uid_bounds(namespace)  # keyset pages, in uid order
            while True:
                last = None
                for rec in run_cypher(
                    s, query, namespace=namespace, after=after, end=end, page=PAGE, **params
                ):
                    last = rec["uid"]
                    yield dict(rec)
                if last is None:
                    return
                after = last

        for doc in run_cypher(s, "export_documents", namespace=namespace):
            w.add("documents.jsonl", {"id": doc["id"], "passages": doc["passages"]})
        yield w.take()
        dims = 0
        for n, r in enumerate(stream("export_passages"), 1):
            props = _clean(r["props"])
            if not pairs_kept:
                props.pop("paired", None)
            vec = list(r["embedding"])
            dims = dims or len(vec)
            w.add("passages.jsonl", {"props": props, "embedding": encode_vector(vec)})
            if n % FETCH_SIZE == 0:
                yield w.take()
        yield w.take()
        for n, r in enumerate(stream("export_concepts"), 1):
            vec = r["embedding"]
            w.add(
                "concepts.jsonl",
                {
                    "props": _clean(r["props"]),
                    "embedding": encode_vector(list(vec)) if vec is not None else None,
                },
            )
            if n % (FETCH_SIZE * 4) == 0:
                yield w.take()
        yield w.take()
        for n, r in enumerate(stream("export_has_passage"), 1):
            passage = r["passage"]
            if not r["links"]:
                continue
            # each passage's links by concept key, not in Neo4j's storage order: the same
            # namespace exports the same bytes, however it was written
            w.add_rows(
                "has_passage.jsonl",
                ({"concept": c, "passage": passage, "mention": m} for c, m in sorted(r["links"])),
            )
            if n % FETCH_SIZE == 0:
                yield w.take()
        yield w.take()
        # each record's `out` holds [key, count, similarity] per target
        for member, rel, key, at in (
            ("co_occurrence.jsonl", "CO_OCCURRENCE", "count", 1),
            ("synonym.jsonl", "SYNONYM", "similarity", 2),
        ):
            if rel == "CO_OCCURRENCE" and not pairs_kept:
                continue
            for n, r in enumerate(stream("export_pairs", type=rel, chunk=PAIR_CHUNK), 1):
                a = r["a"]
                if not r["out"]:
                    continue
                w.add_rows(member, ({"a": a, "b": o[0], key: o[at]} for o in r["out"]))
                if n % FETCH_SIZE == 0:
                    yield w.take()
            yield w.take()
        for run in runs:
            w.add("runs.jsonl", {"props": {k: v for k, v in run.items() if k != "namespace"}})
    dims = dims or int(record.get("embedding_dimensions") or 0)
    members = w.members
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "terag_version": terag_version,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "namespace": namespace,
        "embedding": {
            "model": record.get("embedding_model") or "",
            "dimensions": dims,
            "query_prefix": record.get("embedding_query_prefix"),
            "passage_prefix": record.get("embedding_passage_prefix"),
        },
        "extractor": {
            "name": record.get("extractor"),
            "model": record.get("model"),
            "version": record.get("extractor_version"),
        },
        "retrieval_preset": preset or {},
        "cooccurrence": "kept" if pairs_kept else "lazy",
        "counts": {
            "documents": _rows(members, "documents.jsonl"),
            "passages": _rows(members, "passages.jsonl"),
            "concepts": _rows(members, "concepts.jsonl"),
            "has_passage": _rows(members, "has_passage.jsonl"),
            "co_occurrence": _rows(members, "co_occurrence.jsonl"),
            "synonym": _rows(members, "synonym.jsonl"),
            "runs": _rows(members, "runs.jsonl"),
        },
        "tokens": tokens,
    }
    yield w.finish(manifest)
    log.info("exported namespace %r: %s", namespace, manifest["counts"])


def terag_version() -> str:
    """The installed distribution's version, as the archive's manifest records it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("terag-neo4j")
    except PackageNotFoundError:  # a checkout on the path, not installed
        return "unknown"


def _rows(members: dict[str, Any], name: str) -> int:
    return int(members[name].rows) if name in members else 0


def write_file(chunks: Iterable[bytes], path: Path) -> Path:
    """Write an archive's chunks to `path`: beside it first, renamed when whole, so a failed
    export never leaves a partial archive under the name."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with tmp.open("wb") as f:
            for chunk in chunks:
                f.write(chunk)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
