"""How the walk's mass reached a passage: its strongest paths from the restart vector over the
graph the walk ran on, for `why` (`namespace_views`).

A personalised PageRank score is the sum, over every path from a restart node, of the node's
restart weight times damping / out-degree for each step; at damping 0.5 paths of up to four
steps carry nearly all of it (`pagerank`). So a passage is explained by those paths, found by
meeting in the middle rather than by walking out from every restart node:

    seed passage                                     (the passage itself seeded)
    linked concept -> passage                        (the question names a concept of it)
    seed -> concept -> passage                       (it shares a concept with a seed)
    linked concept -> concept -> passage             (CO_OCCURRENCE, where the walk takes it)
    linked concept -> bridge passage -> concept -> passage
    seed -> concept -> bridge passage -> concept -> passage

Only relationships and nodes the projection holds are used: concept types it skips, concepts
over its hub cap and (on a directed walk) steps out of a passage are not; on a question's local
graph a bridge passage is one the graph grew from (a seed among `local_seeds`, or a passage of a
linked concept). Degrees are the namespace's (a local graph can hold fewer of a passage's
concepts), so a strength is the path's share as the global walk would give it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from terag_neo4j.core.results import MatchedConcept, RetrievalResult, StepRole, WhyPath, WhyStep
from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.store import GraphStore, gds

# Nodes of one passage's explanation, its paths together (the passage itself included): the
# strongest paths go in while they fit, the rest are counted as left out.
WHY_MAX_NODES = 10
# Bridge rows read per passage: a bound on the work for a namespace of large concepts (no hub
# cap); the strongest bridges go through small concepts, which the rows do not favour, so the
# bound is generous.
BRIDGE_ROWS = 5000


@dataclass(frozen=True)
class _Concept:
    node: int
    uid: str
    name: str
    degree: int


@dataclass(frozen=True)
class _Candidate:
    nodes: tuple[tuple[str, int], ...]  # ("c" | "p", GDS node id), start first
    rels: tuple[str | None, ...]
    strength: float


def walk_paths(
    store: GraphStore,
    rc: RetrievalConfig,
    res: RetrievalResult,
    namespace: str,
    target: int,
    max_nodes: int = WHY_MAX_NODES,
) -> tuple[list[WhyPath], int]:
    """The strongest paths of `res`'s walk to the passage `target` (a GDS node id), together at
    most `max_nodes` nodes, strongest first; and how many weaker ones were left out."""
    if not res.restart or res.walk not in ("global", "local"):
        return [], 0  # no walk ranked this question (a dense fallback, or another mode)
    spec = gds.projection_spec(rc)
    local = res.walk == "local"
    undirected = local or rc.orientation == "undirected"
    cooccurrence = "CO_OCCURRENCE" in spec.rel_types and not local
    d = rc.damping
    linked: dict[int, MatchedConcept] = {m.node: m for m in res.matches if m.node >= 0}
    restart = {int(n): float(w) for n, w in res.restart}
    concept_w = {n: w for n, w in restart.items() if n in linked and w > 0}
    seed_w = {n: w for n, w in restart.items() if n not in linked and w > 0}
    # A seed grows paths where the walk's graph gives it relationships: on a local graph only
    # the `local_seeds` best (the others are restart nodes alone), nowhere on a directed one.
    ranked = sorted(seed_w, key=lambda n: (-seed_w[n], n))
    growing = (ranked[: rc.local_seeds or len(ranked)] if local else ranked) if undirected else []
    params = {
        "namespace": namespace,
        "keep": sorted(linked) if local else [],
        "skip_types": spec.skip_types,
        "hub_cap": spec.hub_cap,
    }
    concepts: dict[int, _Concept] = {}
    of_passage: dict[int, list[int]] = defaultdict(list)
    for r in store.read(
        "why_path_concepts", nodes=[target, *growing], cooccurrence=cooccurrence, **params
    ):
        k = _Concept(int(r["concept"]), str(r["uid"]), str(r["name"] or ""), int(r["degree"]))
        concepts[k.node] = k
        of_passage[int(r["passage"])].append(k.node)
    for n in concept_w:  # a linked concept the passages above do not name
        concepts.setdefault(n, _Concept(n, linked[n].uid, linked[n].name, linked[n].frequency))
    targets = set(of_passage.get(target, ()))
    degree = {p: len(cs) for p, cs in of_passage.items()}
    seeds_of: dict[int, list[int]] = defaultdict(list)  # concept -> growing seeds naming it
    for s in growing:
        if s != target:
            for c in of_passage.get(s, ()):
                seeds_of[c].append(s)

    def step(n: int) -> float:
        return d / max(1, concepts[n].degree)

    def out(p: int) -> float:
        return d / max(1, degree.get(p, 1))

    cands: list[_Candidate] = []
    nodes: tuple[tuple[str, int], ...]
    if target in seed_w:
        cands.append(_Candidate((("p", target),), (None,), seed_w[target]))
    for c in targets:
        if c in concept_w:
            cands.append(
                _Candidate((("c", c), ("p", target)), (None, "HAS_PASSAGE"), concept_w[c] * step(c))
            )
        for s in seeds_of.get(c, ()):
            w = seed_w[s] * out(s) * step(c)
            nodes = (("p", s), ("c", c), ("p", target))
            cands.append(_Candidate(nodes, (None, "HAS_PASSAGE", "HAS_PASSAGE"), w))
    if cooccurrence and concept_w and targets:
        for r in store.read(
            "why_path_cooccurrence",
            sources=sorted(concept_w),
            targets=sorted(targets),
            undirected=undirected,
            limit=BRIDGE_ROWS,
        ):
            a, b = int(r["source"]), int(r["target"])
            if b in concepts:
                w = concept_w[a] * step(a) * step(b)
                nodes = (("c", a), ("c", b), ("p", target))
                cands.append(_Candidate(nodes, (None, "CO_OCCURRENCE", "HAS_PASSAGE"), w))
    sources = set(concept_w) | set(seeds_of)
    if undirected and sources and targets:
        rows = store.read(
            "why_path_bridges",
            sources=sorted(sources),
            targets=sorted(targets),
            passage=target,
            limit=BRIDGE_ROWS,
            **params,
        )
        near = set(growing)
        for r in rows:
            p2 = int(r["node"])
            if local and p2 not in near and not r["linked"]:
                continue  # the local graph did not grow from it: no relationships out of it
            degree[p2] = int(r["degree"])
            a, b = int(r["source"]), int(r["target"])
            hp = "HAS_PASSAGE"
            tail = out(p2) * step(b)
            if a in concept_w:
                w = concept_w[a] * step(a) * tail
                nodes = (("c", a), ("p", p2), ("c", b), ("p", target))
                cands.append(_Candidate(nodes, (None, hp, hp, hp), w))
            for s in seeds_of.get(a, ()):
                if s != p2:
                    w = seed_w[s] * out(s) * step(a) * tail
                    nodes = (("p", s), ("c", a), ("p", p2), ("c", b), ("p", target))
                    cands.append(_Candidate(nodes, (None, hp, hp, hp, hp), w))
    return _bounded(store, namespace, cands, concepts, restart, target, max_nodes)


def _bounded(
    store: GraphStore,
    namespace: str,
    cands: Sequence[_Candidate],
    concepts: dict[int, _Concept],
    restart: dict[int, float],
    target: int,
    max_nodes: int,
) -> tuple[list[WhyPath], int]:
    """The strongest candidates whose nodes fit in `max_nodes` together, as `WhyPath`s."""
    best: dict[tuple[tuple[str, int], ...], _Candidate] = {}
    for c in cands:
        if c.strength > 0 and (c.nodes not in best or best[c.nodes].strength < c.strength):
            best[c.nodes] = c
    ranked = sorted(best.values(), key=lambda c: (-c.strength, c.nodes))
    kept: list[_Candidate] = []
    shown: set[tuple[str, int]] = {("p", target)}
    for c in ranked:
        more = set(c.nodes) - shown
        if len(shown) + len(more) <= max_nodes:
            kept.append(c)
            shown |= more
    passages = {n for c in kept for kind, n in c.nodes if kind == "p"}
    info = {
        int(r["node"]): r
        for r in store.read("why_path_passages", nodes=sorted(passages), namespace=namespace)
    }
    paths = []
    for c in kept:
        steps = []
        for i, ((kind, n), rel) in enumerate(zip(c.nodes, c.rels, strict=True)):
            first = i == 0
            if kind == "c":
                k = concepts[n]
                role: StepRole = "question" if first else "bridge"
                steps.append(
                    WhyStep("concept", k.uid, k.name, role, rel, restart.get(n) if first else None)
                )
            else:
                r = info.get(n, {})
                pid = str(r.get("id") or "")
                name = str(r.get("title") or r.get("doc_id") or pid)
                role = "seed" if first else ("passage" if n == target else "bridge")
                steps.append(
                    WhyStep("passage", pid, name, role, rel, restart.get(n) if first else None)
                )
        paths.append(WhyPath(steps=steps, strength=c.strength))
    return paths, len(ranked) - len(kept)
