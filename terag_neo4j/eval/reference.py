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


@dataclass
class ExportedGraph:
    uids: list[str]
    index: dict[str, int]
    passages: npt.NDArray[np.bool_]
    transition: sp.csr_matrix  # column-stochastic over out-edges: x_next = d * T @ x + ...


def export_graph(
    store: GraphStore,
    namespace: str,
    orientation: str = "directed",
    skip_types: Sequence[str] = (),
    rel_types: Sequence[str] = ("HAS_PASSAGE", "CO_OCCURRENCE"),
) -> ExportedGraph:
    """The graph GDS projects for these walk settings (see `Retriever.walk`), read from Neo4j.

    Concept-concept relationships are read both ways; HAS_PASSAGE also back from the passage
    when undirected. Every passage is a node, also one no kept concept reaches.
    """
    row = store.read("export_graph", namespace=namespace)[0]
    keep = {uid for uid, ctype in row["concepts"] if ctype not in skip_types}
    uids = sorted(keep) + list(row["passages"])
    index = {u: i for i, u in enumerate(uids)}
    passages = np.zeros(len(uids), dtype=bool)
    passages[[index[p] for p in row["passages"]]] = True
    src: list[int] = []
    dst: list[int] = []
    for a, b, rtype in row["links"]:
        if rtype in rel_types and a in keep and b in keep:
            src += [index[a], index[b]]
            dst += [index[b], index[a]]
    if "HAS_PASSAGE" in rel_types:
        for c, p in row["has_passage"]:
            if c not in keep:
                continue
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


def passage_vectors(store: GraphStore, namespace: str) -> tuple[list[str], npt.NDArray[np.float64]]:
    rows, matrix = store.read_vectors("passage_vectors", "embedding", namespace=namespace)
    return [r["uid"] for r in rows], matrix.astype(np.float64)


def passage_seeds(
    uids: Sequence[str],
    vectors: npt.NDArray[np.float64],
    query: Sequence[float],
    weight: float,
    power: float,
    top: int = 0,
) -> list[tuple[str, float]]:
    """The passage part of the restart vector, as `pagerank.cypher` computes it in Neo4j.

    Cosine to the question, min-max scaled over all passages, raised to `power`, kept for the
    `top` most similar (0 = all), normalised to sum to `weight`.
    """
    q = np.asarray(query, dtype=np.float64)
    sims = (vectors @ q) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(q))
    lo, hi = sims.min(), sims.max()
    order = np.argsort(-sims, kind="stable")
    chosen = order[:top] if top > 0 else order
    scaled = ((sims[chosen] - lo) / (hi - lo)) ** power if hi > lo else np.ones(len(chosen))
    total = scaled.sum()
    return [(uids[i], weight * w / total) for i, w in zip(chosen, scaled, strict=True) if w > 0]
