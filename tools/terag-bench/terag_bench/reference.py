"""An independent, in-process personalised PageRank (scipy sparse power iteration).

It reads the same graph from Neo4j and applies GDS's formulation, so the benchmark can compare
both the ranking and the latency of GDS against a computation with no database in the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from terag_neo4j.store import GraphStore
from terag_neo4j.store.gds import ProjectionSpec


@dataclass
class ExportedGraph:
    nodes: list[int]  # GDS node ids
    index: dict[int, int]
    passages: npt.NDArray[np.bool_]
    uids: dict[int, str]  # passage node id -> uid
    transition: sp.csr_matrix  # column-stochastic over out-edges: x_next = d * T @ x + ...


def export_graph(
    store: GraphStore, namespace: str, walk: ProjectionSpec, orientation: str
) -> ExportedGraph:
    """The graph GDS projects for this walk (see `gds.projection_spec`), read from Neo4j.

    Concept-concept relationships are read both ways; HAS_PASSAGE also back from the passage
    when undirected. Every passage is a node, also one no kept concept reaches; a concept of a
    skipped type or named by more passages than the hub cap is left out.
    """
    row = store.read("export_graph", namespace=namespace)[0]
    cap = walk.hub_cap or 2**62
    keep = {int(n) for n, ctype, f in row["concepts"] if ctype not in walk.skip_types and f <= cap}
    pids = [int(n) for n, _ in row["passages"]]
    nodes = sorted(keep) + pids
    index = {u: i for i, u in enumerate(nodes)}
    passages = np.zeros(len(nodes), dtype=bool)
    passages[[index[p] for p in pids]] = True
    src: list[int] = []
    dst: list[int] = []
    for a, b, rtype in row["links"]:
        if rtype in walk.rel_types and a in keep and b in keep:
            src += [index[a], index[b]]
            dst += [index[b], index[a]]
    for c, p in row["has_passage"]:
        if c not in keep:
            continue
        src.append(index[c])
        dst.append(index[p])
        if orientation == "undirected":
            src.append(index[p])
            dst.append(index[c])
    n = len(nodes)
    adj = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    outdeg = np.asarray(adj.sum(axis=1)).ravel()
    inv = np.divide(1.0, outdeg, out=np.zeros_like(outdeg), where=outdeg > 0)
    transition = (sp.diags(inv) @ adj).T.tocsr()
    uids = {int(n): str(u) for n, u in row["passages"]}
    return ExportedGraph(nodes, index, passages, uids, transition)


def personalized_pagerank(
    graph: ExportedGraph,
    sources: Sequence[Sequence[float]],
    damping: float = 0.85,
    max_iterations: int = 100,
    tolerance: float = 1e-7,
) -> npt.NDArray[np.float64]:
    """x = (1-d)·b + d·Tᵀx with b the bias vector; dangling mass is not redistributed (as GDS)."""
    bias = np.zeros(len(graph.nodes))
    for node, w in sources:
        if int(node) in graph.index:
            bias[graph.index[int(node)]] += w
    x = (1 - damping) * bias
    for _ in range(max_iterations):
        nxt: npt.NDArray[np.float64] = (1 - damping) * bias + damping * (graph.transition @ x)
        if np.max(np.abs(nxt - x)) < tolerance:
            return nxt
        x = nxt
    return x


def top_passages(
    graph: ExportedGraph, scores: npt.NDArray[np.float64], k: int
) -> list[tuple[str, float]]:
    idx = np.flatnonzero(graph.passages)
    # Equal scores in uid order, as the walk breaks ties (pagerank.cypher).
    order = sorted(idx.tolist(), key=lambda i: (-scores[i], graph.uids[graph.nodes[i]]))[:k]
    return [(graph.uids[graph.nodes[i]], float(scores[i])) for i in order if scores[i] > 0]
