"""Graph Data Science: a namespace's in-memory projection (its name, building it once, dropping
it) and personalised PageRank on it; the passage rankings of budget mode.

Every call goes through `GraphStore`, so GDS calls get the same retries and the same
`Neo4jUnavailable` / `GraphStoreError` translation as every other query.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from typing import Any

from neo4j.exceptions import ClientError

from terag_neo4j.config import Settings
from terag_neo4j.extraction import CONCEPT, TITLE
from terag_neo4j.store import GraphStore, GraphStoreError

log = logging.getLogger(__name__)

MIN_GDS = (2, 17)


def check_version(store: GraphStore) -> str:
    """GDS's version, or a clear error when the plugin is missing or too old."""
    try:
        version = str(store.read("gds_version")[0]["version"])
    except ClientError as e:
        raise GraphStoreError(
            "the Graph Data Science plugin is not installed in this Neo4j "
            "(gds.version() is unknown); `terag server start` provisions it, "
            "docker-compose.yml enables it with NEO4J_PLUGINS"
        ) from e
    parts = tuple(int(x) for x in version.split(".")[:2] if x.isdigit())
    if parts < MIN_GDS:
        raise GraphStoreError(f"GDS {version} is too old: weighted sourceNodes need GDS >= 2.17")
    return version


def walk(settings: Settings) -> tuple[str, list[str], list[str]]:
    """What the projection holds: a short code for its name, skipped concept types, rel types."""
    st = settings
    skip = [t for t, keep in ((TITLE, st.walk_titles), (CONCEPT, st.walk_noun_chunks)) if not keep]
    rels = ["HAS_PASSAGE"] + [
        t
        for t, on in (("CO_OCCURRENCE", st.walk_cooccurrence), ("SYNONYM", st.walk_synonyms))
        if on
    ]
    code = st.orientation[0] + "".join(
        flag
        for flag, on in (
            ("c", st.walk_cooccurrence),
            ("s", st.walk_synonyms),
            ("t", st.walk_titles),
            ("n", st.walk_noun_chunks),
        )
        if on
    )
    return code, skip, rels


def projection_name_re(namespace: str, walk: str | None = None) -> re.Pattern[str]:
    """Full-match pattern of the GDS graph names of one namespace (see `graph_name`).

    Namespaces may contain '_', so `wiki`'s pattern must not match `terag_wiki_en_utn_v3`: the
    walk code (orientation d/u, then the flags c, s, t, n in that order; default any) has no '_',
    and only `_v<n>[_<epoch>]` may follow it.
    """
    code = re.escape(walk) if walk else "[du]c?s?t?n?"
    return re.compile(
        rf"terag_{re.escape(namespace)}_(?P<walk>{code})_v(?P<version>\d+)(?:_[0-9a-f]{{8}})?"
    )


def graph_name(settings: Settings, namespace: str, version: int, epoch: str | None = None) -> str:
    """`terag_<ns>_<walk>_v<version>[_<epoch>]`: the epoch is new each time the namespace is
    created, so a name is never reused after a drop; the walk code names what it holds."""
    name = f"terag_{namespace}_{walk(settings)[0]}_v{version}"
    return f"{name}_{epoch}" if epoch else name


def projections(store: GraphStore, namespace: str, code: str | None = None) -> set[str]:
    """GDS graphs of exactly this namespace (not of `wiki_en` when asked for `wiki`)."""
    prefix = f"terag_{namespace}_{code or ''}"
    pattern = projection_name_re(namespace, code)
    return {
        g
        for g in (r["graphName"] for r in store.read("gds_graphs", prefix=prefix))
        if pattern.fullmatch(g)
    }


def project(store: GraphStore, settings: Settings, namespace: str, graph: str) -> None:
    """Project the namespace's graph under the name `graph`, as `settings` walk it."""
    _, skip, rels = walk(settings)
    t = time.perf_counter()
    try:
        rows = store.execute(
            f"project_{settings.orientation}",
            namespace=namespace,
            graph=graph,
            skip_types=skip,
            rel_types=rels,
        )
        rec: dict[str, Any] | None = rows[0] if rows else None
        log.info(
            "projected %s: %s nodes, %s relationships in %.2fs",
            graph,
            rec and rec["nodes"],
            rec and rec["relationships"],
            time.perf_counter() - t,
        )
    except ClientError as e:
        # Another process projected it first: that is what we wanted.
        if "already exists" not in str(e):
            raise


def drop(store: GraphStore, graph: str) -> None:
    """Drop one GDS graph; a missing one is not an error."""
    store.execute("gds_drop", graph=graph)


def drop_projections(store: GraphStore, namespace: str) -> None:
    for graph in sorted(projections(store, namespace)):
        drop(store, graph)


def ensure_projection(
    store: GraphStore,
    settings: Settings,
    namespace: str,
    lock: threading.Lock,
    known: dict[str, str] | None = None,
) -> tuple[str, str]:
    """The namespace's in-memory graph for the current version, projected once and reused, and
    the namespace's `<version>_<epoch>` key.

    Indexing bumps the namespace version, so a stale projection is never used; the old one is
    dropped when the new one is built. Each walk configuration has its own projection.
    `known` (namespace -> graph this caller saw in the catalog) spares a query at an unchanged
    version the catalog listing, a round trip; see `missing_graph` for one dropped meanwhile.
    """
    rows = store.read("namespace_version", namespace=namespace)
    if not rows:
        store.require_namespace(namespace)
    if settings.walk_cooccurrence and not rows[0]["pairs"]:
        pairs = store.build_cooccurrence(namespace)
        if pairs is not None:
            log.info("built %d CO_OCCURRENCE pairs of %s for the walk", pairs, namespace)
        rows = store.read("namespace_version", namespace=namespace)
    version = int(rows[0]["version"] or 0)
    key = f"{version}_{rows[0].get('epoch')}"
    code = walk(settings)[0]
    name = graph_name(settings, namespace, version, rows[0].get("epoch"))
    if known is not None and known.get(namespace) == name:
        return name, key
    existing = projections(store, namespace, code)
    if name not in existing:
        with lock:
            existing = projections(store, namespace, code)
            if name not in existing:
                project(store, settings, namespace, name)
            for old in existing - {name}:
                drop(store, old)
    if known is not None:
        known[namespace] = name
    return name, key


def missing_graph(e: ClientError) -> bool:
    """GDS's error for a graph name that is not (or no longer) in its catalog."""
    text = f"{e.message or ''} {e}"
    return "does not exist" in text and "graph" in text.lower()


class SeedList(list[list[float]]):
    """A parameter list whose repr is one word.

    The driver formats every RUN's parameters for a debug line whether or not debug logging is
    on; for ~6k passage seeds that repr cost about 10 ms a query on 2Wiki (a third of the
    overhead around GDS's own compute). The list packs exactly as a plain list.
    """

    def __repr__(self) -> str:
        return f"<{len(self)} seeds>"


def pagerank(
    store: GraphStore,
    settings: Settings,
    graph: str,
    sources: list[dict[str, Any]],
    passages: list[list[float]],
    top_k: int,
) -> list[dict[str, Any]]:
    """Personalised PageRank from `sources` (`{uid, weight}` of concepts) and `passages`
    (`[node id, weight]`): the best `top_k` passages with a positive score, best first."""
    st = settings
    candidates = max(200, 40 * top_k)
    while True:
        rows = store.read(
            "pagerank",
            graph=graph,
            sources=sources,
            passages=SeedList(passages),
            damping=st.damping,
            max_iterations=st.max_iterations,
            tolerance=st.tolerance,
            concurrency=st.gds_concurrency,
            candidates=candidates,
            top_k=top_k,
        )
        # Concepts usually outrank passages; widen the window until k passages are in it.
        if len(rows) >= top_k or candidates >= 1_000_000:
            return [r for r in rows if r["score"] > 0]
        candidates *= 8


def pagerank_stats(
    store: GraphStore, settings: Settings, graph: str, sources: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """`gds.pageRank.stats` for the restart vector `sources` (`{uid, weight}` of concepts or
    passages): GDS's own `computeMillis` and `ranIterations`, for the latency benchmark."""
    rows = store.execute(
        "pagerank_stats",
        sources=sources,
        graph=graph,
        damping=settings.damping,
        max_iterations=settings.max_iterations,
        tolerance=settings.tolerance,
        concurrency=settings.gds_concurrency,
    )
    return rows[0] if rows else None


# Budget mode ranks passages over the whole cheap graph: every concept type, HAS_PASSAGE only,
# readable both ways (a passage's rank flows from the concepts it shares).
_CORE_WALK = {
    "orientation": "undirected",
    "walk_titles": True,
    "walk_noun_chunks": True,
    "walk_cooccurrence": False,
    "walk_synonyms": False,
}
CORE_KNN_TOP_K = 10


def core_scores(
    store: GraphStore, settings: Settings, namespace: str, rule: str
) -> dict[str, float]:
    """Every passage's score under budget mode's selection `rule`, over the namespace as it is.

    pagerank: global PageRank over the passage-concept graph (a passage scores high when its
    concepts are shared with many passages that are central themselves); degree: the passage's
    number of concepts; knn_pagerank: PageRank over a `CORE_KNN_TOP_K`-nearest-neighbour graph
    of the passage vectors weighted by cosine, as KET-RAG picks its core chunks. The projection
    is temporary (its name is never a retrieval projection's) and dropped afterwards.
    """
    graph = f"terag_core_{namespace}_{uuid.uuid4().hex[:8]}"
    try:
        if rule == "knn_pagerank":
            store.execute("budget_knn", namespace=namespace, graph=graph, top_k=CORE_KNN_TOP_K)
        else:
            project(store, settings.with_overrides(**_CORE_WALK), namespace, graph)
        if rule == "degree":
            rows = store.execute("budget_degree", graph=graph)
        else:
            weight = "similarity" if rule == "knn_pagerank" else None
            rows = store.execute("budget_pagerank", graph=graph, weight=weight)
    finally:
        drop(store, graph)
    return {r["id"]: float(r["score"]) for r in rows}
