"""Graph Data Science catalog: a namespace's in-memory projection (its name, building it once,
reusing it while an ingest writes, evicting the least recently used past a memory or count cap,
dropping it) and the passage rankings of budget mode.

Every call goes through `GraphStore`, so GDS calls get the same retries and the same
`Neo4jUnavailable` / `GraphStoreError` translation as every other query.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from neo4j.exceptions import ClientError

from terag_neo4j.core.concepts import TITLE
from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.store import GraphStore, GraphStoreError, one_line, write_refused
from terag_neo4j.store.cypher import run_cypher
from terag_neo4j.store.ids import WALK_FLAGS, projection_name_re
from terag_neo4j.store.sessions import ReadNeedsWriter

log = logging.getLogger(__name__)

MIN_GDS = (2, 17)
# Per-query graphs (walk.py) and budget mode's temporary ones: "terag__" never starts a
# namespace's projection name (`terag_<namespace>_...`, a namespace starts with a letter or
# digit), so eviction and a namespace's drop never take one for a namespace's.
LOCAL_PREFIX = "terag__local_"
CORE_PREFIX = "terag__core_"
# Any namespace's projection (`graph_name`): the only graphs eviction drops.
_PROJECTION = projection_name_re()
# When this process last used each projection, and when it last told the others (every
# process records its use on the namespace's ProjectionUse node, at most every USE_WRITE_S):
# eviction drops the graphs least recently used by any process first.
USE_WRITE_S = 30.0
SWEEP_EVERY_S = 300.0
_last_used: dict[str, float] = {}
_use_written: dict[str, float] = {}
_last_sweep = 0.0
_evict_lock = threading.Lock()
# The node ids of projections a restart vector did not fit (see `projected_sources`)
_nodes: dict[str, frozenset[int]] = {}


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


@dataclass(frozen=True)
class ProjectionSpec:
    """What a projection holds: its name's code, the concept types left out, the rel types,
    and whether leaf concepts are folded into their passages (`project_folded`, for
    `damping`)."""

    code: str
    skip_types: list[str]
    rel_types: list[str]
    hub_cap: int
    folded: bool = False
    damping: float = 0.0


def projection_spec(rc: RetrievalConfig) -> ProjectionSpec:
    skip = [TITLE] if not rc.walk_titles else []
    rels = ["HAS_PASSAGE"] + (["CO_OCCURRENCE"] if rc.walk_cooccurrence else [])
    # Flags of knobs since removed (synonyms, adjacent passages) stay off; noun chunks always on
    on = {"c": rc.walk_cooccurrence, "s": False, "t": rc.walk_titles, "n": True, "a": False}
    flags = "".join(f for f in WALK_FLAGS if on[f])
    code = rc.orientation[0] + flags + (f"h{rc.hub_cap}" if rc.hub_cap else "")
    # Folding is exact where a leaf concept's one relationship is to its passage both ways; the
    # fold depends on the damping, which the name then carries (in thousandths).
    folded = rc.orientation == "undirected" and rels == ["HAS_PASSAGE"]
    if folded:
        code += f"f{round(rc.damping * 1000)}"
    return ProjectionSpec(code, skip, rels, rc.hub_cap, folded, rc.damping)


def graph_name(rc: RetrievalConfig, namespace: str, version: int, epoch: str | None = None) -> str:
    """`terag_<ns>_<walk>_v<version>[_<epoch>]`: the epoch is new each time the namespace is
    created, so a name is never reused after a drop; the walk code names what it holds."""
    name = f"terag_{namespace}_{projection_spec(rc).code}_v{version}"
    return f"{name}_{epoch}" if epoch else name


def catalog(store: GraphStore, prefix: str = "terag_") -> list[dict[str, Any]]:
    """The project's GDS graphs: name, memory (bytes), nodes, relationships, creation time."""
    return store.read("gds_graphs", prefix=prefix)


def projections(store: GraphStore, namespace: str, code: str | None = None) -> set[str]:
    """GDS graphs of exactly this namespace (not of `wiki_en` when asked for `wiki`)."""
    pattern = projection_name_re(namespace, code)
    prefix = f"terag_{namespace}_{code or ''}"
    return {g["graphName"] for g in catalog(store, prefix) if pattern.fullmatch(g["graphName"])}


def project(
    store: GraphStore, rc: RetrievalConfig, namespace: str, graph: str, *, whole: bool = False
) -> None:
    """Project the namespace's graph under the name `graph`, as `rc` walks it; `whole`: every
    concept a node of its own, also where the walk would fold the leaves (a graph scored by
    something other than the walk, whose rescaling it lacks)."""
    w = projection_spec(rc)
    if whole:
        w = replace(w, folded=False)
    t = time.perf_counter()
    try:
        rows = store.read(
            "project_folded" if w.folded else f"project_{rc.orientation}",
            namespace=namespace,
            graph=graph,
            skip_types=w.skip_types,
            rel_types=w.rel_types,
            hub_cap=w.hub_cap,
            damping=w.damping,
        )
        rec: dict[str, Any] | None = rows[0] if rows else None
        log.info(
            "projected %s: %s nodes, %s relationships in %.2fs",
            graph,
            rec and rec["nodes"],
            rec and rec["relationships"],
            time.perf_counter() - t,
        )
    except ClientError:
        # Another client projected it first (GDS says "already exists" or, in a race, "already
        # loaded"): that is what we wanted. Asked of the catalog, not read from the message.
        if not any(g["graphName"] == graph for g in catalog(store, graph)):
            raise


def drop(store: GraphStore, graph: str) -> None:
    """Drop one GDS graph; a missing one is not an error."""
    store.read("gds_drop", graph=graph)
    _last_used.pop(graph, None)
    _nodes.pop(graph, None)


def drop_projections(store: GraphStore, namespace: str) -> None:
    for graph in sorted(projections(store, namespace)):
        drop(store, graph)


def used(store: GraphStore, namespace: str, graph: str) -> None:
    """Note that this process walked `graph` now, and tell other processes (throttled)."""
    now = time.monotonic()
    _last_used[graph] = now
    if store.reading_only or now - _use_written.get(graph, -USE_WRITE_S) < USE_WRITE_S:
        return  # a read that may not write keeps this process's order only
    _use_written[graph] = now
    try:
        store.write_tx(
            lambda tx: run_cypher(tx, "projection_used", namespace=namespace, graph=graph).consume()
        )
    except (ClientError, GraphStoreError) as e:  # a read-only user: this process's order only
        log.debug("could not record the use of %s: %s", graph, e)


def _use_order(store: GraphStore) -> dict[str, float]:
    """Seconds since the epoch each projection was last used by any process that recorded it,
    and by this one."""
    shared = {str(r["graph"]): float(r["at"]) for r in store.read("projections_used")}
    wall, mono = time.time(), time.monotonic()
    for graph, t in _last_used.items():
        shared[graph] = max(shared.get(graph, 0.0), wall - (mono - t))
    return shared


def evict(store: GraphStore, max_bytes: int, max_graphs: int, keep: str | None = None) -> list[str]:
    """Drop the least recently used namespace projections (by any process) until at most
    `max_graphs` remain and they take at most `max_bytes` of GDS memory (`keep`, the one in
    use, stays). Per-query and budget graphs are never evicted: their owners drop them."""
    with _evict_lock:
        graphs = [g for g in catalog(store) if _PROJECTION.fullmatch(g["graphName"])]
        order = _use_order(store)
        graphs.sort(
            key=lambda g: (order.get(g["graphName"], 0.0), str(g.get("creationTime") or ""))
        )
        total = sum(int(g.get("sizeInBytes") or 0) for g in graphs)
        count = len(graphs)
        dropped: list[str] = []
        for g in graphs:
            if count <= max_graphs and total <= max_bytes:
                break
            name = g["graphName"]
            if name == keep:
                continue
            drop(store, name)
            dropped.append(name)
            count -= 1
            total -= int(g.get("sizeInBytes") or 0)
        if dropped:
            log.info(
                "evicted GDS projections %s (caps: %d graphs, %d MB)",
                dropped,
                max_graphs,
                max_bytes // 2**20,
            )
        return dropped


@dataclass(frozen=True)
class Caps:
    """How much GDS memory the namespace projections may hold, and how many there may be."""

    max_bytes: int = 1024 * 2**20
    max_graphs: int = 8


def ensure_projection(
    store: GraphStore,
    rc: RetrievalConfig,
    namespace: str,
    lock: threading.Lock,
    known: dict[str, str] | None = None,
    caps: Caps | None = None,
    state: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """The namespace's in-memory graph for the current version, projected once and reused, and
    the namespace's `<version>_<epoch>` key.

    Indexing bumps the namespace version, so a stale projection is not used, except while an
    ingest is writing the namespace: then the newest projection there is serves until the
    ingest ends (each of its batches would otherwise make every reader project again). Old ones
    are dropped when a new one is built; past `caps` the least recently used go.
    `known` (namespace -> graph this caller saw in the catalog) spares a query at an unchanged
    version the catalog listing, a round trip; see `missing_graph` for one dropped meanwhile.
    `state`, the namespace's `namespace_version` row the caller just read, spares another.
    """
    rows = [state] if state is not None else store.read("namespace_version", namespace=namespace)
    if not rows:
        store.require_namespace(namespace)
    if rc.walk_cooccurrence and not rows[0]["pairs"]:
        try:
            pairs = store.cooccurrence.build(namespace)
        except ClientError as e:
            if not write_refused(e):
                raise
            raise ReadNeedsWriter(
                f"namespace {namespace!r} has no CO_OCCURRENCE pairs yet, which this walk reads, "
                f"and this reader may not write them ({one_line(e.message, 80)}): a writer builds "
                f"them once with `terag index <its documents> --namespace {namespace} "
                f"--cooccurrence eager`, or one query of this preset (through the service: by a "
                f"key that may write {namespace!r})"
            ) from e
        if pairs is not None:
            log.info("built %d CO_OCCURRENCE pairs of %s for the walk", pairs, namespace)
        rows = store.read("namespace_version", namespace=namespace)
    row = rows[0]
    version = int(row["version"] or 0)
    key = f"{version}_{row.get('epoch')}"
    code = projection_spec(rc).code
    name = graph_name(rc, namespace, version, row.get("epoch"))
    if known is not None and known.get(namespace) == name:
        used(store, namespace, name)
        return name, key
    existing = projections(store, namespace, code)
    if name not in existing and row.get("ingesting") and existing:
        # Reuse the newest projection of this incarnation while an ingest writes.
        pattern = projection_name_re(namespace, code)
        same_epoch = [g for g in existing if g.endswith(f"_{row.get('epoch')}")]
        if same_epoch:
            newest = max(same_epoch, key=lambda g: int(pattern.fullmatch(g)["version"]))  # type: ignore[index]
            used(store, namespace, newest)
            return newest, key
    if name not in existing:
        with lock:
            existing = projections(store, namespace, code)
            if name not in existing:
                project(store, rc, namespace, name)
            for old in existing - {name}:
                drop(store, old)
        caps = caps or Caps()
        evict(store, caps.max_bytes, caps.max_graphs, keep=name)
        maybe_sweep(store)
    used(store, namespace, name)
    if known is not None:
        known[namespace] = name
    return name, key


# Neo4j reports every failed procedure with this one code; which failure it was is the Java
# exception GDS raised, named in the message (GDS's `GraphNotFoundException` for a graph name
# not in its catalog), not the English text around it.
PROCEDURE_FAILED = "Neo.ClientError.Procedure.ProcedureCallFailed"
GRAPH_NOT_FOUND = "org.neo4j.gds.core.loading.GraphNotFoundException"


def missing_graph(e: ClientError) -> bool:
    """GDS's error for a graph name that is not (or no longer) in its catalog."""
    return e.code == PROCEDURE_FAILED and GRAPH_NOT_FOUND in (e.message or "")


def projected_sources(
    store: GraphStore, graph: str, sources: Sequence[Sequence[float]], load: bool = False
) -> list[Sequence[float]]:
    """The restart vector `sources` ([node id, weight]) without the nodes `graph` does not hold
    (written after it was projected; see `walk.pagerank`). The graph's nodes are read when
    `load` is set (a restart vector did not fit it) and kept with its name; until then nothing
    is left out."""
    nodes = _nodes.get(graph)
    if nodes is None:
        if not load:
            return list(sources)
        nodes = frozenset(int(r["node"]) for r in store.read("projection_nodes", graph=graph))
        _nodes[graph] = nodes
    return [s for s in sources if int(s[0]) in nodes]


def projected_version(namespace: str, graph: str) -> int:
    """The namespace version a projection was built at (its name says); a per-query graph is
    built from the graph as it is now, so every passage in it counts."""
    m = projection_name_re(namespace).fullmatch(graph)
    return int(m["version"]) if m else 2**62


def local_name() -> str:
    return f"{LOCAL_PREFIX}{uuid.uuid4().hex[:12]}"


def maybe_sweep(store: GraphStore) -> None:
    """`sweep_local` at most every SWEEP_EVERY_S per process (called on the query path)."""
    global _last_sweep
    now = time.monotonic()
    if now - _last_sweep < SWEEP_EVERY_S:
        return
    _last_sweep = now
    try:
        sweep_local(store)
    except (ClientError, GraphStoreError) as e:  # the next sweep tries again
        log.debug("sweeping per-query graphs failed: %s", e)


def sweep_local(store: GraphStore, older_than_s: float = 300.0) -> list[str]:
    """Drop per-query graphs a crashed query or a failed drop left behind (each query drops
    its own; none lives longer than a query)."""
    now = time.time()
    stale = []
    for g in catalog(store, LOCAL_PREFIX):
        created: Any = g.get("creationTime")
        epoch = created.to_native().timestamp() if hasattr(created, "to_native") else None
        if epoch is not None and now - epoch > older_than_s:
            drop(store, g["graphName"])
            stale.append(g["graphName"])
    return stale


# Budget mode ranks passages over the whole cheap graph: every concept type, HAS_PASSAGE only,
# readable both ways (a passage's rank flows from the concepts it shares).
_CORE_WALK = RetrievalConfig(walk="global", hub_cap=0)
CORE_KNN_TOP_K = 10


def core_scores(store: GraphStore, namespace: str, rule: str) -> dict[str, float]:
    """Every passage's score under budget mode's selection `rule`, over the namespace as it is.

    pagerank: global PageRank over the passage-concept graph (a passage scores high when its
    concepts are shared with many passages that are central themselves); degree: the passage's
    number of concepts; knn_pagerank: PageRank over a `CORE_KNN_TOP_K`-nearest-neighbour graph
    of the passage vectors weighted by cosine, as KET-RAG picks its core chunks. The projection
    is temporary (its name is never a retrieval projection's) and dropped afterwards.
    """
    graph = f"{CORE_PREFIX}{namespace}_{uuid.uuid4().hex[:8]}"
    try:
        if rule == "knn_pagerank":
            store.read("budget_knn", namespace=namespace, graph=graph, top_k=CORE_KNN_TOP_K)
        else:
            project(store, _CORE_WALK, namespace, graph, whole=True)
        if rule == "degree":
            rows = store.read("budget_degree", graph=graph)
        else:
            weight = "similarity" if rule == "knn_pagerank" else None
            rows = store.read("budget_pagerank", graph=graph, weight=weight)
    finally:
        drop(store, graph)
    return {r["id"]: float(r["score"]) for r in rows}
