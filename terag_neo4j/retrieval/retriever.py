"""Retrieval stage: link the question to concepts -> rank passages flat (words and meaning) ->
restart vector (`restart.py`) -> GDS personalised PageRank (`walk.py`) -> top passages ->
optionally a short answer (`reader.py`).

The knobs are `settings.retrieval` (`presets.py`); the TERAG paper's exact retrieval is the
`paper` preset: query NER, exact then semantic matching, s/f per match group, a directed walk
over CO_OCCURRENCE.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from neo4j.exceptions import ClientError

from terag_neo4j.config import Settings
from terag_neo4j.core.concepts import Concept, normalize_name
from terag_neo4j.core.extractor import Extractor
from terag_neo4j.core.results import (
    AnswerResult,
    MatchedConcept,
    Mode,
    RetrievalResult,
    RetrievedPassage,
)
from terag_neo4j.embeddings import AnyEmbedder
from terag_neo4j.errors import TeragError
from terag_neo4j.llm import OllamaLLM
from terag_neo4j.retrieval import final_rank, restart, walk
from terag_neo4j.retrieval.concept_match import SemanticMatch, link_names, match_entities
from terag_neo4j.retrieval.flat import (
    FlatRanking,
    dense_passages,
    flat_passages,
    flat_ranking,
    rrf_fuse,
)
from terag_neo4j.retrieval.overlap import Background
from terag_neo4j.retrieval.presets import RetrievalConfig
from terag_neo4j.retrieval.reader import READER_MAX_TOKENS as READER_MAX_TOKENS  # re-exported
from terag_neo4j.retrieval.reader import cite, read
from terag_neo4j.retrieval.result_cache import cached_retrieval, prefetched_state
from terag_neo4j.store import GraphStore, check_namespace, gds
from terag_neo4j.store.concept_vectors import ensure_concept_vectors
from terag_neo4j.store.namespace_embedder import NamespaceEmbedders, embed_query

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 10_000  # query NER (spaCy, an LLM prompt) is meant for a question


class RetrievalError(TeragError, ValueError):
    """A query that cannot be answered as asked; the message says why."""


_passage = RetrievedPassage.from_row


class Retriever:
    def __init__(
        self,
        settings: Settings,
        store: GraphStore,
        query_extractor: Extractor,
        embedder: AnyEmbedder,
        llm: OllamaLLM | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.extractor = query_extractor
        self.embedder = embedder
        self.llm = llm
        # Picks the query NER backend per namespace (TeragClient: the one it was indexed with).
        self.extractor_for: Callable[[str], Extractor] | None = None
        # Which model embeds a namespace's questions; alone it refuses a namespace of another
        # model, and TeragClient replaces it with its own, which loads that model (shared with
        # indexing)
        self.embedders = NamespaceEmbedders(embedder, settings.embedding_model)
        self._project_lock = threading.Lock()
        self._versions: dict[str, str] = {}
        # Graphs this client saw in the GDS catalog, by namespace (see `gds.ensure_projection`).
        self._projected: dict[str, str] = {}
        self._embedded: dict[str, str] = {}  # namespace -> version whose concepts all have vectors
        self._vectors: dict[str, tuple[str, npt.NDArray[np.int64], npt.NDArray[np.float32]]] = {}
        self._vectors_lock = threading.Lock()
        self._gds_checked = False
        self.caps = gds.Caps(settings.gds_memory_mb * 2**20, settings.gds_max_projections)

    @property
    def rc(self) -> RetrievalConfig:
        """The retrieval knobs in force (`settings.retrieval`)."""
        return self.settings.retrieval

    # ------------------------------------------------------------------ GDS projection

    def check_gds(self) -> str:
        if self._gds_checked:
            return "ok"
        version = gds.check_version(self.store)
        self._gds_checked = True
        return version

    def walk(self) -> gds.Walk:
        """What the walk's graph holds (its code, skipped concept types, relationship types)."""
        return gds.walk(self.rc)

    def scope(self, passages: int) -> str:
        """`global` or `local` for a namespace of this many passages (see `presets.py`)."""
        if self.rc.walk != "auto":
            return self.rc.walk
        return "local" if passages > self.rc.local_above else "global"

    def ensure_projection(self, namespace: str, state: dict[str, Any] | None = None) -> str:
        """The namespace's GDS graph for the current version and walk (see `gds.ensure_projection`)."""
        name, self._versions[namespace] = gds.ensure_projection(
            self.store, self.rc, namespace, self._project_lock, self._projected, self.caps, state
        )
        return name

    def drop_projections(self, namespace: str) -> None:
        self._projected.pop(namespace, None)
        gds.drop_projections(self.store, namespace)

    # ------------------------------------------------------------------ linking

    def query_entities(
        self, query: str, run_id: str, namespace: str | None = None
    ) -> tuple[list[Concept], int, int]:
        """Query NER with `extractor_for(namespace)` when set (the namespace's own backend)."""
        extractor = (
            self.extractor_for(namespace)
            if self.extractor_for is not None and namespace
            else self.extractor
        )
        concepts, tin, tout = extractor.extract_query(query, run_id)
        return list(concepts), tin, tout

    def link(self, namespace: str, query: str) -> tuple[list[str], list[MatchedConcept]]:
        """Concepts the question names, by n-gram lookup (`linking.link_names`)."""
        return link_names(self.store, namespace, query, self.walk().skip_types)

    def match(
        self,
        namespace: str,
        query: str,
        entities: Sequence[Concept],
        embedder: AnyEmbedder | None = None,
    ) -> list[MatchedConcept]:
        """The paper's matching of NER entities (`linking.match_entities`)."""
        rc = self.rc
        emb = embedder or self.embedder
        return match_entities(
            self.store,
            namespace,
            query,
            entities,
            semantic=SemanticMatch(rc.semantic_top_n, rc.similarity_mode, emb),
            skip_types=self.walk().skip_types,
            ensure_vectors=lambda: self.ensure_concept_vectors(namespace, emb),
        )

    def ensure_concept_vectors(self, namespace: str, embedder: AnyEmbedder | None = None) -> None:
        """Concept embeddings for semantic matching: written on first use (lazy indexing), then
        checked once per namespace version."""
        version = self._versions.get(namespace, "")
        if self._embedded.get(namespace) == version:
            return
        with self._vectors_lock:
            if self._embedded.get(namespace) != version:
                ensure_concept_vectors(self.store, embedder or self.embedder, namespace)
                self._embedded[namespace] = version

    # ------------------------------------------------------------------ restart vector

    def passage_vectors(
        self, namespace: str
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """GDS node ids and embeddings of the namespace's passages, read once per version (only
        for `seeds="dense"` over every passage, HippoRAG 2's passage nodes: small corpora)."""
        version = self._versions.get(namespace, "")
        with self._vectors_lock:
            cached = self._vectors.get(namespace)
            if cached is None or cached[0] != version:
                rows, matrix = self.store.read_vectors(
                    "passage_vectors", "embedding", namespace=namespace
                )
                ids = np.asarray([r["node"] for r in rows], dtype=np.int64)
                cached = (version, ids, matrix)
                self._vectors[namespace] = cached
        return cached[1], cached[2]

    def dense_seeds(self, namespace: str, vector: Sequence[float]) -> list[list[float]]:
        """Every passage (or the `seed_top` most similar) by its min-max-scaled cosine to the
        question raised to `seed_power`, together `seed_weight`."""
        ids, matrix = self.passage_vectors(namespace)
        return restart.dense_seed_weights(ids, matrix, vector, self.rc)

    def concept_weights(
        self, matches: Sequence[MatchedConcept], flat: FlatRanking | None
    ) -> list[MatchedConcept]:
        rc = self.rc
        if rc.hub_cap:  # a hub carries no walk: it has no relationships in the walk's graph
            matches = [m for m in matches if m.frequency <= rc.hub_cap]
        if rc.weighting != "verified":
            return restart.paper_weights(matches, rc.weighting, rc.restart_split)
        if flat is None or not matches:
            return []
        rows = self.store.read(
            "concept_support",
            concepts=sorted({m.node for m in matches}),
            candidates=sorted(flat.relevance),
        )
        support = {int(r["node"]): [int(p) for p in r["passages"]] for r in rows}
        return restart.verified_weights(matches, support, flat, rc)

    # ------------------------------------------------------------------ ranking

    def embed_query(self, query: str, embedder: AnyEmbedder | None = None) -> list[float]:
        return embed_query(embedder or self.embedder, query)

    @cached_retrieval
    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        namespace: str | None = None,
        entities: Sequence[str] | None = None,
        run_id: str = "query",
        mode: Mode | None = None,
    ) -> RetrievalResult:
        """Top passages for `query`; `entities` skips linking (caller-supplied entities)."""
        if not query or not query.strip():
            raise RetrievalError("empty query: ask a question")
        if len(query) > MAX_QUERY_CHARS:
            raise RetrievalError(
                f"query of {len(query):,} characters is over the {MAX_QUERY_CHARS:,} limit: "
                "ask a question, not a document"
            )
        ns = check_namespace(namespace or self.settings.namespace)
        k = self.settings.top_k if top_k is None else top_k
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise RetrievalError(f"top_k must be a whole number of at least 1, got {k!r}")
        rc = self.rc
        mode = mode or ("hybrid" if rc.hybrid else "pagerank")
        timings: dict[str, float] = {}
        t = time.perf_counter()
        state = prefetched_state(ns) or self.store.read("namespace_version", namespace=ns)
        if not state:
            self.store.require_namespace(ns)
        emb = self.embedders.for_namespace(ns, state[0].get("embedding_model"))
        # Embedded once, from now on a worker while linking and the full-text ranking run where
        # a step needs the vector (else when first needed: never, where no step does)
        question_vector = Background(
            lambda: self.embed_query(query, emb),
            start=mode != "pagerank" or rc.seeds != "none" or rc.weighting == "verified",
        )
        self.store.ensure_search(ns, state[0])
        scope = self.scope(int(state[0]["passages"] or 0)) if mode not in ("dense", "flat") else ""
        if scope == "global":
            graph = self.ensure_projection(ns, state[0])
        else:
            graph = ""
            # Caches keyed by the version (vectors) follow the namespace without a projection too
            self._versions[ns] = f"{state[0]['version'] or 0}_{state[0].get('epoch')}"
        timings["projection"] = time.perf_counter() - t

        t = time.perf_counter()
        tin = tout = 0
        matches: list[MatchedConcept] = []
        if mode in ("dense", "flat"):
            # No graph to start from: linking or NER would only cost time (and LLM tokens)
            names = [e for e in entities or () if normalize_name(e)]
        elif entities is None and rc.linking != "ner":
            names, matches = self.link(ns, query) if rc.linking == "names" else ([], [])
            timings["linking"] = time.perf_counter() - t
        else:
            if entities is not None:
                ents = [Concept("other", e) for e in entities if normalize_name(e)]
            else:
                ents, tin, tout = self.query_entities(query, run_id, ns)
            timings["ner"] = time.perf_counter() - t
            t = time.perf_counter()
            names = [c.name for c in ents]
            matches = self.match(ns, query, ents, emb) if ents else []
            timings["matching"] = time.perf_counter() - t
        result = RetrievalResult(query, ns, names, [], [], mode, None, timings, tin, tout)
        if mode == "dense":
            t = time.perf_counter()
            result.passages = dense_passages(self.store, ns, question_vector(), k)
            timings["dense"] = time.perf_counter() - t
            return result
        if mode == "flat":
            t = time.perf_counter()
            result.passages = flat_passages(self.store, ns, query, question_vector(), k)
            timings["flat"] = time.perf_counter() - t
            return result

        flat: FlatRanking | None = None
        if rc.seeds == "fused" or rc.weighting == "verified":
            t = time.perf_counter()  # with any wait for the vector
            vec, top = question_vector, rc.flat_top
            flat = flat_ranking(self.store, ns, query, vec, top, rc.dense_share, rc.flat_scaling)
            timings["flat"] = time.perf_counter() - t
        if rc.seeds != "none":
            question_vector()
            timings["embedding"] = question_vector.elapsed  # on the worker, overlapped
        t = time.perf_counter()
        result.matches = self.concept_weights(matches, flat)
        seeds: list[list[float]] = []
        if rc.seeds == "fused" and flat is not None:
            seeds = restart.passage_seeds(flat, rc)
        elif rc.seeds == "dense" and rc.seed_weight > 0:
            seeds = self.dense_seeds(ns, question_vector())
        result.restart = [[m.node, m.weight] for m in result.matches] + seeds
        timings["restart"] = time.perf_counter() - t

        if not result.restart:
            result.mode = "dense"
            result.fallback_reason = (
                "no entities found in the query" if not names else "no concept matched the query"
            )
            log.info("falling back to dense retrieval: %s", result.fallback_reason)
            t = time.perf_counter()
            result.passages = dense_passages(self.store, ns, question_vector(), k)
            timings["dense"] = time.perf_counter() - t
            return result
        if not result.matches:
            result.fallback_reason = (
                "no entities found in the query"
                if not names
                else "no linked concept was specific to the question's passages"
            ) + ": the walk starts from the flat ranking alone"

        t = time.perf_counter()
        want = k if mode == "pagerank" else max(k, 50)
        ranked = self._walk(ns, scope, graph, result, seeds, want)
        timings["pagerank"] = time.perf_counter() - t
        if mode == "hybrid":
            t = time.perf_counter()
            dense = dense_passages(self.store, ns, question_vector(), max(k, 50))
            ranked = rrf_fuse([ranked, dense], k)
            timings["dense"] = time.perf_counter() - t
        result.passages = final_rank.finish(self.store, rc, mode, flat, ranked, k, timings)
        return result

    def _walk(
        self,
        ns: str,
        scope: str,
        graph: str,
        result: RetrievalResult,
        seeds: list[list[float]],
        want: int,
    ) -> list[RetrievedPassage]:
        result.walk = scope
        if scope == "local":
            rows, info = walk.local_pagerank(
                self.store,
                self.rc,
                ns,
                seeds,
                [m.node for m in result.matches],
                result.restart,
                want,
            )
            result.graph_nodes, result.graph_relationships = info.nodes, info.relationships
            result.timings["local_projection"] = info.project_s
            return [_passage(r) for r in rows]
        try:
            rows = walk.pagerank(self.store, self.rc, ns, graph, result.restart, want)
        except ClientError as e:
            if not gds.missing_graph(e):
                raise
            # Dropped since this client last saw it (another process, eviction, a restart).
            log.info("projection %s is gone; projecting again", graph)
            self._projected.pop(ns, None)
            graph = self.ensure_projection(ns)
            rows = walk.pagerank(self.store, self.rc, ns, graph, result.restart, want)
        return [_passage(r) for r in rows]

    def answer(
        self,
        query: str,
        top_k: int | None = None,
        namespace: str | None = None,
        run_id: str = "query",
    ) -> AnswerResult:
        if self.llm is None:
            raise RetrievalError("answering needs an LLM (Ollama); none is configured")
        res = self.retrieve(query, top_k=top_k, namespace=namespace, run_id=run_id)
        answer, comp = read(self.llm, query, res.passages, run_id=run_id)
        citations, uncited = cite(answer, res.passages)
        return AnswerResult(answer, res, comp.input_tokens, comp.output_tokens, citations, uncited)
