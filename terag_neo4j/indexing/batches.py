"""How an ingest cuts its passages into written batches, and its warning when a namespace was
built by another extractor."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TypeVar

from terag_neo4j.store import GraphStore

log = logging.getLogger(__name__)
T = TypeVar("T")

# The first batch written holds at most this many passages and each next one at most twice as
# many, up to `batch_passages`: a large document shows passages done within seconds, while most
# of it goes in full batches.
FIRST_BATCH = 8
# ... and its embedding and write may take this long: a batch that took less lets the next
# hold twice as many, one that took more shrinks the next to this long's worth at its rate. A
# batch costs about 7 s at a load of 10 on 2 cores whatever its size (8 passages of 256 tokens
# took 7-8 s).
GAP_S = 15.0
MIN_FIT = 8  # never fewer: past a load where one batch takes GAP_S, its fixed cost dominates


def batch_caps(largest: int, first: int = FIRST_BATCH) -> Iterator[int]:
    """The most passages each next batch may hold: growing from `first` to `largest`, then
    `largest` for ever."""
    size = max(1, min(first, largest))
    while True:
        yield size
        size = min(size * 2, largest)


def batch_fit(written: int, took_s: float, largest: int) -> int:
    """How many passages the next batches may hold, after a batch of `written` whose
    embedding and write took `took_s`: twice as many within GAP_S, else GAP_S's worth at its
    rate; between MIN_FIT (or `largest` if smaller) and `largest`."""
    fit = written * 2 if took_s <= GAP_S else int(written * GAP_S / took_s)
    return min(largest, max(MIN_FIT, fit))


def planned(todo: Sequence[T], largest: int, fit: list[int]) -> Iterator[list[T]]:
    """`todo` in batches as `batch_caps` grows them, each held to `fit[0]` as it is when the
    batch is taken (the caller sets it from how the last batches went)."""
    at = 0
    for cap in batch_caps(largest):
        if at >= len(todo):
            return
        size = min(cap, fit[0])
        yield list(todo[at : at + size])
        at += size


def batch_sizes(n: int, largest: int, first: int = FIRST_BATCH) -> list[int]:
    """The sizes of the batches `n` passages are written in when every batch is in time:
    growing from `first` to `largest`."""
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
