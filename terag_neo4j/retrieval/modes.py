"""The retrieval modes, one strategy class each: `Retriever.retrieve` does what every mode shares
(checks, the namespace's state, the question's vector, linking) and hands the question to the
mode's `get_search_results`, which fills in the passages.

- `dense`: the namespace's vector index alone;
- `flat`: BM25 and vector rankings fused by reciprocal rank, no graph;
- `pagerank`: the restart vector (linked concepts, flat passage seeds), the walk, the final
  ranking (`final_rank.py`);
- `hybrid`: the walk's ranking fused by reciprocal rank with the vector ranking.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from terag_neo4j import tracing
from terag_neo4j.core.results import MatchedConcept, Mode, RetrievalResult, RetrievedPassage
from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.retrieval import final_rank, learned, restart
from terag_neo4j.retrieval.flat import (
    FlatRanking,
    dense_passages,
    flat_passages,
    flat_ranking,
    rrf_fuse,
)
from terag_neo4j.retrieval.learned import WALK_CANDIDATES, Inputs
from terag_neo4j.retrieval.overlap import Background
from terag_neo4j.store import GraphStore

log = logging.getLogger(__name__)


@dataclass
class Question:
    """One question as the modes see it, after the shared steps."""

    text: str
    namespace: str
    k: int
    vector: Background[list[float]]  # the question's vector, embedded once when first needed
    scope: str  # `global`, `local` or "" (no walk)
    graph: str  # the global projection's name, else ""
    nodes: dict[str, int] = field(default_factory=dict)  # walked passage id -> node id


class Shared(Protocol):
    """What the modes use of the `Retriever`: its collaborators and the graph steps."""

    store: GraphStore
    probe: Any  # Callable[[learned.Inputs], None] | None

    @property
    def rc(self) -> RetrievalConfig: ...

    def concept_weights(
        self, matches: Sequence[MatchedConcept], flat: FlatRanking | None
    ) -> list[MatchedConcept]: ...

    def walk_passages(
        self, q: Question, result: RetrievalResult, seeds: list[list[float]], want: int
    ) -> list[RetrievedPassage]: ...


class SearchMode:
    """A way to rank passages; `Retriever` holds the collaborators the modes share."""

    name: ClassVar[Mode]
    walks: ClassVar[bool] = False  # links the question to concepts and walks the graph

    def __init__(self, retriever: Shared) -> None:
        self.retriever = retriever

    def get_search_results(self, q: Question, result: RetrievalResult) -> RetrievalResult:
        raise NotImplementedError


class DenseMode(SearchMode):
    name = "dense"

    def get_search_results(self, q: Question, result: RetrievalResult) -> RetrievalResult:
        with tracing.stage("dense", result.timings):
            result.passages = dense_passages(self.retriever.store, q.namespace, q.vector(), q.k)
        return result


class FlatMode(SearchMode):
    name = "flat"

    def get_search_results(self, q: Question, result: RetrievalResult) -> RetrievalResult:
        with tracing.stage("flat", result.timings):
            store = self.retriever.store
            result.passages = flat_passages(store, q.namespace, q.text, q.vector(), q.k)
        return result


class PageRankMode(SearchMode):
    name: ClassVar[Mode] = "pagerank"
    walks = True

    def get_search_results(self, q: Question, result: RetrievalResult) -> RetrievalResult:
        r, rc, timings = self.retriever, self.retriever.rc, result.timings
        flat: FlatRanking | None = None
        if rc.seeds == "fused" or rc.weighting == "verified":
            with tracing.stage("flat", timings):  # with any wait for the vector
                flat = flat_ranking(
                    r.store, q.namespace, q.text, q.vector, rc.flat_top, rc.dense_share
                )
        if rc.seeds != "none":
            q.vector()
            timings["embedding"] = q.vector.elapsed  # on the worker, overlapped
        with tracing.stage("restart", timings):
            result.matches = r.concept_weights(result.matches, flat)
            seeds: list[list[float]] = []
            if rc.seeds == "fused" and flat is not None:
                seeds = restart.passage_seeds(flat, rc)
            result.restart = [[m.node, m.weight] for m in result.matches] + seeds

        if not result.restart:
            result.mode = "dense"
            result.fallback_reason = (
                "no entities found in the query"
                if not result.entities
                else "no concept matched the query"
            )
            log.info("falling back to dense retrieval: %s", result.fallback_reason)
            return DenseMode(r).get_search_results(q, result)
        if not result.matches:
            result.fallback_reason = (
                "no entities found in the query"
                if not result.entities
                else "no linked concept was specific to the question's passages"
            ) + ": the walk starts from the flat ranking alone"

        learn = self.name == "pagerank" and (rc.final_rank == "learned" or r.probe is not None)
        with tracing.stage("walk", timings, key="pagerank"):
            depth = self.depth(q.k)
            # the model's candidate pool; a probe (the bench's training data) sees the widest
            pool = WALK_CANDIDATES if r.probe is not None else learned.shipped().walk
            want = max(depth, pool) if learn else depth
            ranked = r.walk_passages(q, result, seeds, want)
        ranked = self.fuse(q, ranked, timings)
        inputs = final_inputs(q, result, flat, ranked) if learn and flat is not None else None
        if inputs is not None and r.probe is not None:
            r.probe(inputs)
        result.passages = final_rank.finish(
            r.store, rc, self.name, flat, ranked, q.k, timings, inputs
        )
        return result

    def depth(self, k: int) -> int:
        """How many passages the walk returns."""
        return k

    def fuse(
        self, q: Question, ranked: list[RetrievedPassage], timings: dict[str, float]
    ) -> list[RetrievedPassage]:
        return ranked


class HybridMode(PageRankMode):
    name: ClassVar[Mode] = "hybrid"

    def depth(self, k: int) -> int:
        return max(k, 50)

    def fuse(
        self, q: Question, ranked: list[RetrievedPassage], timings: dict[str, float]
    ) -> list[RetrievedPassage]:
        with tracing.stage("dense", timings):
            dense = dense_passages(self.retriever.store, q.namespace, q.vector(), max(q.k, 50))
            return rrf_fuse([ranked, dense], q.k)


def final_inputs(
    q: Question, result: RetrievalResult, flat: FlatRanking, walked: Sequence[RetrievedPassage]
) -> Inputs:
    """What the learned final ranking reads: the walk's passages by node with their mass, both
    flat rankings with their raw scores, the linked concepts and which passages name them."""
    return Inputs(
        [(q.nodes[p.id], p.score) for p in walked if p.id in q.nodes],
        list(zip(flat.text_order, flat.text_scores, strict=False)),
        list(zip(flat.vector_order, flat.vector_scores, strict=False)),
        [(m.node, m.frequency, m.weight) for m in result.matches],
        flat.support,
    )


MODES: dict[str, type[SearchMode]] = {
    m.name: m for m in (DenseMode, FlatMode, PageRankMode, HybridMode)
}


def needs_vector(mode: type[SearchMode], rc: RetrievalConfig) -> bool:
    """Whether the question's vector is certainly needed (embedded at once, on a worker)."""
    return mode is not PageRankMode or rc.seeds != "none" or rc.weighting == "verified"
