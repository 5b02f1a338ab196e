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

from terag_neo4j.graph_store import GraphStore


@dataclass
class ExportedGraph:
    uids: list[str]
    index: dict[str, int]
    passages: npt.NDArray[np.bool_]
    transition: sp.csr_matrix  # column-stochastic over out-edges: x_next = d * T @ x + ...


def export_graph(store: GraphStore, namespace: str, orientation: str = "directed") -> ExportedGraph:
    row = store.read("export_graph", namespace=namespace)[0]
    has_passage: list[list[str]] = row["has_passage"]
    cooc: list[list[str]] = row["cooccurrence"]
    uids = list(row["concepts"])
    index = {u: i for i, u in enumerate(uids)}
    for _, p in has_passage:
        if p not in index:
            index[p] = len(uids)
            uids.append(p)
    passages = np.zeros(len(uids), dtype=bool)
    passages[[index[p] for _, p in has_passage]] = True
    src: list[int] = []
    dst: list[int] = []
    for a, b in cooc:  # read both ways, as projected
        src += [index[a], index[b]]
        dst += [index[b], index[a]]
    for c, p in has_passage:
        src.append(index[c])
        dst.append(index[p])
        if orientation == "undirected":
            src.append(index[p])
            dst.append(index[c])
    n = len(uids)
    adj = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    outdeg = np.asarray(adj.sum(axis=1)).ravel()
    inv = np.divide(1.0, outdeg, out=np.zeros_like(outdeg), where=outdeg > 0)
    transition = (sp.diags(inv) @ adj).T.tocsr()
    return ExportedGraph(uids, index, passages, transition)


def personalized_pagerank(
    graph: ExportedGraph,
    sources: Sequence[tuple[str, float]],
    damping: float = 0.85,
    max_iterations: int = 100,
    tolerance: float = 1e-7,
) -> npt.NDArray[np.float64]:
    """x = (1-d)·b + d·Tᵀx with b the bias vector; dangling mass is not redistributed (as GDS)."""
    bias = np.zeros(len(graph.uids))
    for uid, w in sources:
        bias[graph.index[uid]] += w
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
    order = idx[np.argsort(-scores[idx], kind="stable")][:k]
    return [(graph.uids[i], float(scores[i])) for i in order if scores[i] > 0]
