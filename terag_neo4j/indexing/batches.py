"""How an ingest cuts its passages into written batches, and its warning when a namespace was
built by another extractor."""

from __future__ import annotations

import logging

from terag_neo4j.store import GraphStore

log = logging.getLogger(__name__)

# The first batch written holds this many passages and each next one twice as many, up to
# `batch_passages`: a large document shows passages done within seconds (one batch of 512
# spaCy passages takes about 40 s on 2 cores), while most of it goes in full batches.
FIRST_BATCH = 32


def batch_sizes(n: int, largest: int, first: int = FIRST_BATCH) -> list[int]:
    """The sizes of the batches `n` passages are written in: growing from `first` to `largest`."""
    sizes: list[int] = []
    size = max(1, min(first, largest))
    while n > 0:
        sizes.append(min(size, n))
        n -= sizes[-1]
        size = min(size * 2, largest)
    return sizes


def warn_if_built_differently(store: GraphStore, ns: str, now: tuple[str, str, str]) -> None:
    """Warn when `ns` was built with another extractor than `now` (backend, model, version):
    passages indexed unchanged keep what the old one found."""
    rows = store.read("namespace_version", namespace=ns)
    if not rows or rows[0]["extractor"] is None:
        return
    # Namespaces from before versions were recorded are compared on backend and model only.
    built = (rows[0]["extractor"], rows[0]["model"], rows[0]["extractor_version"] or now[2])
    if built != now:
        log.warning(
            "namespace %r was built with %s; this run extracts with %s. Passages already "
            "indexed unchanged are not extracted again: drop the namespace "
            "(`terag delete --all -n %s`) to rebuild it with the new extractor.",
            ns,
            "/".join(map(str, built)),
            "/".join(now),
            ns,
        )
