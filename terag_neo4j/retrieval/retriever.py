"""Retrieval stage: link the question to concepts -> rank passages flat (words and meaning) ->
restart vector (`restart.py`) -> GDS personalised PageRank (`pagerank.py`) -> top passages ->
optionally a short answer (`answer.py`). Each mode is a strategy (`modes.py`); the `Retriever`
holds what they share.

The knobs are `settings.retrieval` (`recipes.py`); the TERAG paper's exact retrieval is the
`paper` recipe: query NER, exact then semantic matching, s/f per match group, a directed walk
over CO_OCCURRENCE.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from neo4j.exceptions import ClientError

from terag_neo4j import tracing
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
from terag_neo4j.llm import LLM, TokenLedger
from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.retrieval import learned, pagerank, restart
from terag_neo4j.retrieval.answer import READER_MAX_TOKENS as READER_MAX_TOKENS  # re-exported
from terag_neo4j.retrieval.answer import cite, read
from terag_neo4j.retrieval.concept_match import SemanticMatch, link_names, match_entities
from terag_neo4j.retrieval.flat import FlatRanking
from terag_neo4j.retrieval.modes import MODES, Question, needs_vector
from terag_neo4j.retrieval.overlap import Background
from terag_neo4j.retrieval.result_cache import cached_retrieval, prefetched_state
from terag_neo4j.store import GraphStore, check_namespace, gds
from terag_neo4j.store.concept_vectors import ensure_concept_vectors
from terag_neo4j.store.namespace_embedder import NamespaceEmbedders, embed_query

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 10_000  # query NER (spaCy, an LLM prompt) is meant for a question


class RetrievalError(TeragError, ValueError):
    """A query that cannot be answered as asked; the message says why."""


_passage = RetrievedPassage.from_row


def _walked(q: Question, rows: Sequence[dict[str, Any]]) -> list[RetrievedPassage]:
    """The walk's passages; their node ids go to `q.nodes` (the final ranking's key)."""
    q.nodes.update({str(r["id"]): int(r["node"]) for r in rows})
    return [_passage(r) for r in rows]


class Retriever:
    def __init__(
        self,
        settings: Settings,
        store: GraphStore,
        query_extractor: Extractor,
        embedder: AnyEmbedder,
        llm: Callable[[], LLM] | None = None,
        *,
        extractor_for: Callable[[str], Extractor] | None = None,
        embedders: NamespaceEmbedders | None = None,
        ledger: TokenLedger | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.extractor = query_extractor
        self.embedder = embedder
        # The reader LLM, asked for when an answer needs it (None: answers are refused)
        self.llm = llm
        # Picks the query NER backend per namespace (TeragClient: the one it was indexed with).
        self.extractor_for = extractor_for
        # Which model embeds a namespace's questions; alone it refuses a namespace of another
        # model; TeragClient's loads that model (shared with indexing)
        self.embedders = embedders or NamespaceEmbedders(embedder, settings.embedding_model)
        self.ledger = ledger  # tokens of the stages that count them (the reranker)
        self._project_lock = threading.Lock()
        self._versions: dict[str, str] = {}
        # Graphs this client saw in the GDS catalog, by namespace (see `gds.ensure_projection`).
        self._projected: dict[str, str] = {}
        self._embedded: dict[str, str] = {}  # namespace -> version whose concepts all have vectors
        self._vectors_lock = threading.Lock()
        self._gds_checked = False
        self.caps = gds.Caps(settings.gds_memory_mb * 2**20, settings.gds_max_projections)
        # Called with each walk's final-ranking inputs (`learned.Inputs`): the bench's training
        # data is what the final stage sees, by construction
        self.probe: Callable[[learned.Inputs], None] | None = None

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

    def projection_spec(self) -> gds.ProjectionSpec:
        """What the walk's graph holds (its code, skipped concept types, relationship types)."""
        return gds.projection_spec(self.rc)

    def scope(self, passages: int) -> str:
        """`global` or `local` for a namespace of this many passages (see `recipes.py`)."""
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
    ) -> tuple[list[Concept], int | None, int | None]:
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
        return link_names(self.store, namespace, query, self.projection_spec().skip_types)

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
            semantic=SemanticMatch(rc.semantic_top_n, emb),
            skip_types=self.projection_spec().skip_types,
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

    def concept_weights(
        self, matches: Sequence[MatchedConcept], flat: FlatRanking | None
    ) -> list[MatchedConcept]:
        rc = self.rc
        if rc.hub_cap:  # a hub carries no walk: it has no relationships in the walk's graph
            matches = [m for m in matches if m.frequency <= rc.hub_cap]
        if rc.weighting != "verified":
            return restart.paper_weights(matches)
        if flat is None or not matches:
            return []
        rows = self.store.read(
            "concept_support",
            concepts=sorted({m.node for m in matches}),
            candidates=sorted(flat.relevance),
        )
        support = {int(r["node"]): [int(p) for p in r["passages"]] for r in rows}
        flat.support = support
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
        if (mode or "pagerank") not in MODES:
            raise RetrievalError(f"unknown mode {mode!r}: choose one of {', '.join(MODES)}")
        strategy = MODES[mode or "pagerank"](self)
        timings: dict[str, float] = {}
        outside = tracing.current()  # the question's vector is the retrieval's stage
        with tracing.stage("projection", timings):
            state = prefetched_state(ns) or self.store.read("namespace_version", namespace=ns)
            if not state:
                self.store.require_namespace(ns)
            emb = self.embedders.for_namespace(ns, state[0])

            # Embedded once, from now on a worker while linking and the full-text ranking run
            # where a step needs the vector (else when first needed: never, where no step does)
            def embed() -> list[float]:
                with tracing.stage("embedding"):
                    return self.embed_query(query, emb)

            question_vector = Background(
                tracing.carry(embed, outside), start=needs_vector(type(strategy), rc)
            )
            self.store.search_indexes.ensure(ns, state[0])
            scope = self.scope(int(state[0]["passages"] or 0)) if strategy.walks else ""
            if scope == "global":
                graph = self.ensure_projection(ns, state[0])
            else:
                graph = ""
                # Caches keyed by the version (vectors) follow the namespace without a projection
                self._versions[ns] = f"{state[0]['version'] or 0}_{state[0].get('epoch')}"

        tin: int | None = 0
        tout: int | None = 0
        matches: list[MatchedConcept] = []
        if not strategy.walks:
            # No graph to start from: linking or NER would only cost time (and LLM tokens)
            names = [e for e in entities or () if normalize_name(e)]
        elif entities is None and rc.linking == "names":
            with tracing.stage("linking", timings):
                names, matches = self.link(ns, query)
        else:
            with tracing.stage("ner", timings):
                if entities is not None:
                    ents = [Concept("other", e) for e in entities if normalize_name(e)]
                else:
                    ents, tin, tout = self.query_entities(query, run_id, ns)
            with tracing.stage("matching", timings):
                names = [c.name for c in ents]
                matches = self.match(ns, query, ents, emb) if ents else []
        result = RetrievalResult(
            query, ns, names, matches, [], strategy.name, None, timings, tin, tout
        )
        question = Question(query, ns, k, question_vector, scope, graph)
        return strategy.get_search_results(question, result)

    def walk_passages(
        self,
        q: Question,
        result: RetrievalResult,
        seeds: list[list[float]],
        want: int,
    ) -> list[RetrievedPassage]:
        """The walk from `result.restart`: over the question's neighbourhood, or the namespace's
        projection (projected again where it is gone)."""
        ns, graph = q.namespace, q.graph
        result.walk = q.scope
        if q.scope == "local":
            rows, info = pagerank.local_pagerank(
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
            return _walked(q, rows)
        leaves = pagerank.leaf_concepts(result.matches)
        folded = self.projection_spec().folded
        try:
            rows = pagerank.pagerank(
                self.store, self.rc, ns, graph, result.restart, want, folded=folded, leaves=leaves
            )
        except ClientError as e:
            if not gds.missing_graph(e):
                raise
            # Dropped since this client last saw it (another process, eviction, a restart).
            log.info("projection %s is gone; projecting again", graph)
            self._projected.pop(ns, None)
            graph = self.ensure_projection(ns)
            rows = pagerank.pagerank(
                self.store, self.rc, ns, graph, result.restart, want, folded=folded, leaves=leaves
            )
        return _walked(q, rows)

    def answer(
        self,
        query: str,
        top_k: int | None = None,
        namespace: str | None = None,
        run_id: str = "query",
    ) -> AnswerResult:
        if self.llm is None:
            raise RetrievalError("answering needs an LLM (TERAG_LLM_MODEL); none is configured")
        res = self.retrieve(query, top_k=top_k, namespace=namespace, run_id=run_id)
        answer, comp = read(self.llm(), query, res.passages, run_id=run_id)
        citations, uncited = cite(answer, res.passages)
        return AnswerResult(
            answer, res, comp.input_tokens, comp.output_tokens, citations, uncited, cut=comp.cut
        )
