"""A folder kept in step with its namespace: the documents read from files under an indexed
folder whose files are gone, reported after an ingest and, when asked, deleted.

Only documents read from under the folder are candidates (their id, a file's absolute path, or
their source starts with the folder's), and only those whose file no longer exists: a file that
is still there but was skipped (unreadable, excluded by a glob) keeps its document.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path

from terag_neo4j.core.documents import absolute
from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.store import GraphStore

log = logging.getLogger(__name__)

_LINE = re.compile(r":\d+$")  # a JSONL record's source is `path:line`


def _file_of(doc_id: str, source: str | None, prefix: str) -> str:
    """The file a document was read from under `prefix`."""
    if doc_id.startswith(prefix):
        return doc_id
    return _LINE.sub("", source or "")


def gone_documents(store: GraphStore, namespace: str, folders: Sequence[Path]) -> list[str]:
    """Ids of the namespace's documents read from files under `folders` that no longer exist."""
    gone: set[str] = set()
    for folder in folders:
        prefix = absolute(folder).rstrip("/") + "/"  # ids are POSIX paths
        for doc_id, source in store.documents.under(namespace, prefix).items():
            if not os.path.exists(_file_of(doc_id, source, prefix)):
                gone.add(doc_id)
    return sorted(gone)


def sync_folders(
    store: GraphStore, namespace: str, paths: Sequence[Path], report: IngestReport, prune: bool
) -> None:
    """Report the documents whose files are gone from the indexed folders among `paths`; with
    `prune`, delete them."""
    folders = [p for p in paths if p.is_dir()]
    if not folders or not store.read("namespace_version", namespace=namespace):
        return
    report.missing_documents = gone_documents(store, namespace, folders)
    if not report.missing_documents:
        return
    if prune:
        for doc_id in report.missing_documents:
            if store.documents.delete(namespace, doc_id):
                report.documents_deleted += 1
        log.info("deleted %d documents whose files are gone", report.documents_deleted)
    else:
        log.warning(
            "%d documents of %r were read from files that are gone (index again with --prune "
            "to delete them): %s",
            len(report.missing_documents),
            namespace,
            ", ".join(report.missing_documents[:5]),
        )
