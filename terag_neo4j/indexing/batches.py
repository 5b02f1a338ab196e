"""How an ingest cuts its passages into written batches, and its warning when a namespace was
built by another extractor."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from terag_neo4j.store import GraphStore

log = logging.getLogger(__name__)

# The first batch written holds at most this many passages and each next one at most twice as
# many, up to `batch_passages`: a large document shows passages done within seconds, while most
# of it goes in full batches.
FIRST_BATCH = 8
# ... and a batch ends once its extraction has taken this long, and holds no more than the last
# batch's rate embedded and wrote in this long: one batch of 512 spaCy passages took 37 s at a
# load of 10 on 2 cores, and a job's passages done move only when a batch is written. The next
# batch is extracted while one is embedded and written, so passages done move about every
# BATCH_S at any load.
BATCH_S = 8.0
# ... but no fewer passages than this, so a batch's fixed cost (its transaction, the embedder's
# call) stays small beside its passages. Passages of 256 tokens went at 0.4-0.5 passages/s at a
# load of 20 on 2 cores whether batches held 3 or 32, but 32 of them were 66 s apart.
MIN_FIT = 8


def batch_caps(largest: int, first: int = FIRST_BATCH) -> Iterator[int]:
    """The most passages each next batch may hold: growing from `first` to `largest`, then
    `largest` for ever."""
    size = max(1, min(first, largest))
    while True:
        yield size
        size = min(size * 2, largest)


def batch_fit(written: int, took_s: float, largest: int) -> int:
    """How many passages the next batches may hold: as many as embedding and writing took
    BATCH_S for at the rate of a batch of `written` that took `took_s`, between MIN_FIT (or
    `largest` if smaller) and `largest`."""
    fit = int(written * BATCH_S / took_s) if took_s > 0 else largest
    return min(largest, max(MIN_FIT, fit))


def batch_sizes(n: int, largest: int, first: int = FIRST_BATCH) -> list[int]:
    """The sizes of the batches `n` passages are written in when no batch is cut short by
    BATCH_S: growing from `first` to `largest`."""
    sizes: list[int] = []
    for cap in batch_caps(largest, first):
        if n <= 0:
            return sizes
        sizes.append(min(cap, n))
        n -= sizes[-1]
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
