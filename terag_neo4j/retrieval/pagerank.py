"""The walk: GDS personalised PageRank from a restart vector, on the namespace's projection
(`global`) or on a projection of the question's neighbourhood built for this query (`local`).

A global walk's cost grows with the namespace (every iteration visits every node), a local
walk's with the question: its graph is the seeded passages and the linked concepts' passages,
their concepts named by at most `hub_cap` passages, and those concepts' passages. With the same
hub cap both walk the same paths of length up to four from the restart nodes (concept ->
passage -> concept -> passage), which at damping 0.5 carry nearly all the mass.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from neo4j.exceptions import ClientError

from terag_neo4j.core.results import MatchedConcept
from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.store import GraphStore, gds

log = logging.getLogger(__name__)


# Scores are kept to this many decimals (`settled`), and the query reads this many passages
# past the k asked for, so that ties at the cut are settled the same way every time.
SETTLE_DIGITS = 12
SETTLE_SPARE = 5
# A per-query projection is small: GDS's coordination of more read threads cost more than it
# saved (4 threads: 140 against 40-70 ms for 9k relationships on 2 cores).
LOCAL_READ_THREADS = 1


class SeedList(list[list[float]]):
    """A parameter list whose repr is one word.

    The driver formats every RUN's parameters for a debug line whether or not debug logging is
    on; for thousands of seeds that repr cost about 10 ms a query. It packs as a plain list.
    """

    def __repr__(self) -> str:
        return f"<{len(self)} seeds>"


def pagerank(
    store: GraphStore,
    rc: RetrievalConfig,
    namespace: str,
    graph: str,
    sources: Sequence[Sequence[float]],
    top_k: int,
    *,
    folded: bool = False,
    leaves: Collection[int] = (),
) -> list[dict[str, Any]]:
    """Personalised PageRank from `sources` ([node id, weight]): the best `top_k` passages with
    a positive score, best first.

    On a `folded` projection (`project_folded`) the concepts among `leaves` (linked concepts
    one passage names, or none: the projection holds neither) restart from that passage.

    The projection can be older than the seeds: an ingest has readers reuse the projection it
    started with, and a batch may commit between a query's projection and its flat ranking. Its
    passages and concepts are not in the graph, the walk could not reach them, and GDS refuses
    a restart vector that names them: they are left out (`gds.projected_sources`), and with
    none left there is nothing to walk.
    """
    restart, moved = split_leaves(sources, leaves if folded else ())
    restart = gds.projected_sources(store, graph, restart)
    candidates = max(200, 40 * top_k)
    while True:
        if not restart and not moved:
            log.info("no restart node is in %s (written since it was projected): no walk", graph)
            return []
        try:
            rows = store.read(
                "pagerank_folded" if folded else "pagerank",
                graph=graph,
                namespace=namespace,
                version=gds.projected_version(namespace, graph),
                sources=SeedList([[int(n), float(w)] for n, w in restart]),
                leaves=SeedList([[int(n), float(w)] for n, w in moved]),
                damping=rc.damping,
                max_iterations=rc.max_iterations,
                tolerance=rc.tolerance,
                concurrency=rc.gds_concurrency,
                candidates=candidates,
                top_k=top_k + SETTLE_SPARE,
            )
        except ClientError as e:
            # Not by the message: a failure with every source in the graph is no such case.
            kept = (
                restart
                if gds.missing_graph(e)
                else gds.projected_sources(store, graph, restart, load=True)
            )
            if len(kept) == len(restart):
                raise
            restart = kept
            continue
        # Concepts usually outrank passages; widen the window until k passages are in it (and,
        # folded, until no passage outside it can outscore the last one returned). A folded
        # walk knows when the window held every node: then there is nothing more to find.
        whole = folded and bool(rows) and bool(rows[0]["whole"])
        complete = not folded or not rows or rows[-1]["score"] > rows[0]["floor"]
        if whole or (len(rows) >= top_k and complete) or candidates >= 1_000_000:
            return settled(rows)[:top_k]
        candidates *= 8


def leaf_concepts(matches: Iterable[MatchedConcept]) -> set[int]:
    """The linked concepts a folded projection does not hold: those one passage (or none) names."""
    return {m.node for m in matches if m.frequency <= 1}


def split_leaves(
    sources: Sequence[Sequence[float]], leaves: Collection[int]
) -> tuple[list[Sequence[float]], list[Sequence[float]]]:
    """`sources` as the restart nodes a folded projection holds, and those of `leaves`, which
    `pagerank_folded` moves to their passages."""
    moved = [s for s in sources if int(s[0]) in leaves]
    return [s for s in sources if int(s[0]) not in leaves], moved


def settled(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The walk's passages with positive scores, best first, each score cut to SETTLE_DIGITS
    decimals and equal scores in uid order.

    With more than one thread GDS sums in an order that varies from run to run, which moved
    scores by about 4e-18 (on 2Wiki; top 5 at 1e-2 to 1e-4): digits far below the walk's
    tolerance, but enough to reorder two passages that tie. Cut there, a score is the same in
    every run, and so is the order of passages whose scores tie."""
    out = [
        {**r, "score": round(float(r["score"]), SETTLE_DIGITS)}
        if r["score"] >= 10.0**-SETTLE_DIGITS
        else dict(r)
        for r in rows
        if r["score"] > 0
    ]
    return sorted(out, key=lambda r: (-r["score"], r["uid"]))


@dataclass
class LocalGraph:
    nodes: int = 0
    relationships: int = 0
    project_s: float = 0.0


def local_pagerank(
    store: GraphStore,
    rc: RetrievalConfig,
    namespace: str,
    seeds: Sequence[Sequence[float]],
    concepts: Sequence[int],
    sources: Sequence[Sequence[float]],
    top_k: int,
) -> tuple[list[dict[str, Any]], LocalGraph]:
    """Project the question's neighbourhood, walk it, drop it (also when the walk fails).

    `seeds` are the passage seeds ([node id, weight]); the best `rc.local_seeds` of them grow
    the graph, the others are in it as restart nodes alone."""
    w = gds.projection_spec(rc)
    name = gds.local_name()
    info = LocalGraph()
    # Equal weights in node-id order: which seeds grow the graph must not depend on input order.
    ranked = [int(n) for n, _ in sorted(seeds, key=lambda s: (-s[1], s[0]))]
    cut = rc.local_seeds or len(ranked)
    t = time.perf_counter()
    try:
        rows = store.read(
            "project_local",
            graph=name,
            seeds=ranked[:cut],
            lone=ranked[cut:],
            concepts=[int(c) for c in concepts],
            hub_cap=w.hub_cap or 2**62,
            skip_types=w.skip_types,
            concurrency=LOCAL_READ_THREADS,
        )
        info.project_s = time.perf_counter() - t
        if rows:
            info.nodes, info.relationships = int(rows[0]["nodes"]), int(rows[0]["relationships"])
        return pagerank(store, rc, namespace, name, sources, top_k), info
    finally:
        try:
            gds.drop(store, name)
        finally:
            gds.maybe_sweep(store)  # what a failed drop here, or a killed process, left


def pagerank_stats(
    store: GraphStore,
    rc: RetrievalConfig,
    namespace: str,
    graph: str,
    sources: Sequence[Sequence[float]],
    leaves: Collection[int] = (),
) -> dict[str, Any] | None:
    """`gds.pageRank.stats` for the restart vector `sources`, as `pagerank` walks it: GDS's own
    `computeMillis` and `ranIterations`, for the latency benchmark."""
    folded = gds.projection_spec(rc).folded
    restart, moved = split_leaves(sources, leaves if folded else ())
    rows = store.read(
        "pagerank_stats",
        sources=SeedList([[int(n), float(wt)] for n, wt in restart]),
        leaves=SeedList([[int(n), float(wt)] for n, wt in moved]),
        namespace=namespace,
        version=gds.projected_version(namespace, graph),
        graph=graph,
        weight="weight" if folded else None,
        damping=rc.damping,
        max_iterations=rc.max_iterations,
        tolerance=rc.tolerance,
        concurrency=rc.gds_concurrency,
    )
    return rows[0] if rows else None
