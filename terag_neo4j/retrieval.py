"""Retrieval stage (TERAG §4.3): query NER -> concept matching -> restart vector -> GDS
personalised PageRank -> top passages -> (optionally) a short answer.

Restart vector (eqs. 3-5): w(u) = s(u) / f(u) with s = 1 for an exact match and the cosine
similarity for a semantic one, f = number of passages the concept occurs in; weights are
normalised within the exact group and within the semantic group.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from neo4j.exceptions import ClientError

from terag_neo4j import gds
from terag_neo4j.concept_vectors import ensure_concept_vectors
from terag_neo4j.config import Settings
from terag_neo4j.embeddings import CachedEmbedder, Embedder
from terag_neo4j.extraction import Concept, Extractor, normalize_name
from terag_neo4j.linking import question_spans, select_links, span_norms
from terag_neo4j.llm import Message, OllamaLLM, Stage
from terag_neo4j.store import GraphStore, check_namespace

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 10_000  # query NER (spaCy, an LLM prompt) is meant for a question
MatchKind = Literal["exact", "semantic"]
Mode = Literal["pagerank", "dense", "hybrid"]


class RetrievalError(ValueError):
    """A query that cannot be answered as asked; the message says why."""


@dataclass(frozen=True)
class MatchedConcept:
    entity: str
    uid: str
    key: str
    name: str
    type: str
    match: MatchKind
    similarity: float
    frequency: int
    weight: float = 0.0


@dataclass(frozen=True)
class RetrievedPassage:
    id: str
    doc_id: str
    title: str
    text: str
    score: float


@dataclass
class RetrievalResult:
    query: str
    namespace: str
    entities: list[str]
    matches: list[MatchedConcept]
    passages: list[RetrievedPassage]
    mode: Mode
    fallback_reason: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class AnswerResult:
    answer: str
    retrieval: RetrievalResult
    input_tokens: int
    output_tokens: int


def restart_weights(
    matches: Sequence[MatchedConcept],
    weighting: Literal["s_over_f", "inv_f", "uniform"] = "s_over_f",
    split: Literal["pooled", "group"] = "group",
) -> list[MatchedConcept]:
    """Eqs. 3-5: w(u) = s(u)/f(u). A concept matched by several entities keeps its strongest match.

    `group` normalises the exact and the semantic matches separately (the paper: each group gets
    half the mass when both exist); `pooled` normalises them together, so a weak semantic match
    weighs by its similarity instead of by its group. `inv_f` drops the similarity (s = 1, the
    paper's Table 5 ablation); `uniform` drops the specificity 1/f as well.
    """
    best: dict[str, MatchedConcept] = {}
    for m in matches:
        cur = best.get(m.uid)
        if cur is None or (m.match == "exact", m.similarity) > (
            cur.match == "exact",
            cur.similarity,
        ):
            best[m.uid] = m
    groups = (
        [[m for m in best.values() if m.match == kind] for kind in ("exact", "semantic")]
        if split == "group"
        else [list(best.values())]
    )
    out: list[MatchedConcept] = []
    for group in groups:
        raw = [_raw_weight(m, weighting) for m in group]
        total = sum(raw)
        for m, w in zip(group, raw, strict=True):
            out.append(_with_weight(m, w / total if total > 0 else 0.0))
    return [m for m in out if m.weight > 0]


def _raw_weight(m: MatchedConcept, weighting: str) -> float:
    s = 1.0 if m.match == "exact" or weighting != "s_over_f" else max(m.similarity, 0.0)
    return s if weighting == "uniform" else s / max(m.frequency, 1)


def _with_weight(m: MatchedConcept, w: float) -> MatchedConcept:
    return MatchedConcept(
        m.entity, m.uid, m.key, m.name, m.type, m.match, m.similarity, m.frequency, w
    )


def _passage(r: dict[str, Any]) -> RetrievedPassage:
    return RetrievedPassage(
        r["id"], r["doc_id"], r["title"] or "", r["text"] or "", float(r["score"])
    )


class Retriever:
    def __init__(
        self,
        settings: Settings,
        store: GraphStore,
        query_extractor: Extractor,
        embedder: Embedder | CachedEmbedder,
        llm: OllamaLLM | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.extractor = query_extractor
        self.embedder = embedder
        self.llm = llm
        # Picks the query NER backend per namespace (TeragClient: the one it was indexed with).
        self.extractor_for: Callable[[str], Extractor] | None = None
        self._project_lock = threading.Lock()
        self._versions: dict[str, str] = {}
        # Graphs this client saw in the GDS catalog, by namespace (see `gds.ensure_projection`).
        self._projected: dict[str, str] = {}
        self._embedded: dict[str, str] = {}  # namespace -> version whose concepts all have vectors
        self._vectors: dict[str, tuple[str, npt.NDArray[np.int64], npt.NDArray[np.float32]]] = {}
        self._vectors_lock = threading.Lock()
        self._gds_checked = False

    # ------------------------------------------------------------------ GDS projection

    def check_gds(self) -> str:
        if self._gds_checked:
            return "ok"
        version = gds.check_version(self.store)
        self._gds_checked = True
        return version

    def walk(self) -> tuple[str, list[str], list[str]]:
        """What the projection holds: a short code for its name, skipped concept types, rel types."""
        return gds.walk(self.settings)

    def graph_name(self, namespace: str, version: int, epoch: str | None = None) -> str:
        return gds.graph_name(self.settings, namespace, version, epoch)

    def ensure_projection(self, namespace: str) -> str:
        """The namespace's GDS graph for the current version and walk (see `gds.ensure_projection`)."""
        name, self._versions[namespace] = gds.ensure_projection(
            self.store, self.settings, namespace, self._project_lock, self._projected
        )
        return name

    def drop_projections(self, namespace: str) -> None:
        self._projected.pop(namespace, None)
        gds.drop_projections(self.store, namespace)

    # ------------------------------------------------------------------ stages

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
        """Concepts the question names, found by looking its n-grams up (zero tokens, no NER)."""
        spans = question_spans(query)
        rows = self._exact_rows(namespace, span_norms(spans))
        links = select_links(query, spans, set(rows))
        names = [rows[s.norm][0]["name"] for s in links]
        matches = [
            MatchedConcept(
                s.norm, r["uid"], r["key"], r["name"], r["type"], "exact", 1.0, r["frequency"]
            )
            for s in links
            for r in rows[s.norm]
        ]
        return names, matches

    def _exact_rows(self, namespace: str, norms: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        by_norm: dict[str, list[dict[str, Any]]] = {}
        if not norms:
            return by_norm
        skip = self.walk()[1]
        for r in self.store.read("match_exact", namespace=namespace, norms=norms, skip_types=skip):
            by_norm.setdefault(r["norm"], []).append(r)
        return by_norm

    def match(
        self, namespace: str, query: str, entities: Sequence[Concept]
    ) -> list[MatchedConcept]:
        by_norm = self._exact_rows(namespace, sorted({c.norm for c in entities if c.norm}))
        matches: list[MatchedConcept] = []
        unmatched: list[Concept] = []
        for c in entities:
            rows = by_norm.get(c.norm)
            if not rows:
                unmatched.append(c)
                continue
            matches += [
                MatchedConcept(
                    c.name, r["uid"], r["key"], r["name"], r["type"], "exact", 1.0, r["frequency"]
                )
                for r in rows
            ]
        if unmatched and self.settings.semantic_top_n > 0:
            self.ensure_concept_vectors(namespace)
            if self.settings.similarity_mode == "query":
                # The whole question against the concepts: one search serves every unmatched entity.
                texts = [query]
                owners = [", ".join(c.name for c in unmatched)]
            else:
                texts = [c.name for c in unmatched]
                owners = texts
            vectors = self.embedder.embed(texts)
            for owner, vec in zip(owners, vectors, strict=True):
                for r in self._semantic(namespace, vec.tolist()):
                    matches.append(
                        MatchedConcept(
                            owner,
                            r["uid"],
                            r["key"],
                            r["name"],
                            r["type"],
                            "semantic",
                            float(r["similarity"]),
                            r["frequency"],
                        )
                    )
        return matches

    def ensure_concept_vectors(self, namespace: str) -> None:
        """Concept embeddings for semantic matching: written on first use (lazy indexing), then
        checked once per namespace version."""
        version = self._versions.get(namespace, "")
        if self._embedded.get(namespace) == version:
            return
        with self._vectors_lock:
            if self._embedded.get(namespace) != version:
                ensure_concept_vectors(self.store, self.embedder, namespace)
                self._embedded[namespace] = version

    def _semantic(self, namespace: str, vector: list[float]) -> list[dict[str, Any]]:
        n = self.settings.semantic_top_n
        skip = self.walk()[1]
        rows = self.store.read(
            "match_semantic",
            namespace=namespace,
            vector=vector,
            candidates=n * 20,
            top_n=n,
            skip_types=skip,
        )
        if len(rows) < n:
            rows = self.store.read(
                "match_semantic_scan", namespace=namespace, vector=vector, top_n=n, skip_types=skip
            )
        return rows

    def passage_vectors(
        self, namespace: str
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """GDS node ids and embeddings of the namespace's passages, read once per version.

        Scoring every passage against the question here is one matrix product; the same in
        Cypher reads every passage's vector property per query (hundreds of ms on 2Wiki).
        Memory: 4 bytes per dimension per passage (9 MB for 2Wiki's 6k passages).
        """
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

    def passage_sources(self, namespace: str, query_vector: Sequence[float]) -> list[list[float]]:
        """HippoRAG 2's passage nodes in the restart vector: every passage (or the `top` most
        similar) by its min-max-scaled cosine to the question raised to `power`, together
        `passage_seed_weight` (the concepts carry 1)."""
        st = self.settings
        ids, matrix = self.passage_vectors(namespace)
        if not len(ids):
            return []
        q = np.asarray(query_vector, dtype=np.float32)
        sims = matrix @ (q / max(float(np.linalg.norm(q)), 1e-12))
        lo, hi = float(sims.min()), float(sims.max())
        order = np.argsort(-sims, kind="stable")
        chosen = order[: st.passage_seed_top] if st.passage_seed_top > 0 else order
        scaled = (
            ((sims[chosen] - lo) / (hi - lo)) ** st.passage_seed_power
            if hi > lo
            else np.ones(len(chosen), dtype=np.float32)
        )
        weights = st.passage_seed_weight * scaled / float(scaled.sum())
        keep = weights > 0
        # tolist() converts in C: a per-element int()/float() loop cost ~6 ms for 6k passages.
        return [
            [node, w]
            for node, w in zip(ids[chosen][keep].tolist(), weights[keep].tolist(), strict=True)
        ]

    def pagerank(
        self,
        graph: str,
        namespace: str,
        weighted: Sequence[MatchedConcept],
        top_k: int,
        query_vector: Sequence[float] | None,
    ) -> list[RetrievedPassage]:
        st = self.settings
        passages = (
            self.passage_sources(namespace, query_vector)
            if st.passage_seed_weight > 0 and query_vector is not None
            else []
        )
        sources = [{"uid": m.uid, "weight": m.weight} for m in weighted]
        rows = gds.pagerank(self.store, st, graph, sources, passages, top_k)
        return [_passage(r) for r in rows]

    def dense(self, namespace: str, query: str, top_k: int) -> list[RetrievedPassage]:
        vec = self.embedder.embed([query])[0].tolist()
        rows = self.store.read(
            "dense_passages", namespace=namespace, vector=vec, candidates=top_k * 20, top_k=top_k
        )
        if len(rows) < top_k:
            rows = self.store.read(
                "dense_passages_scan", namespace=namespace, vector=vec, top_k=top_k
            )
        return [_passage(r) for r in rows]

    # ------------------------------------------------------------------ public

    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        namespace: str | None = None,
        entities: Sequence[str] | None = None,
        run_id: str = "query",
        mode: Mode | None = None,
    ) -> RetrievalResult:
        """Top passages for `query`; `entities` skips query NER (caller-supplied entities)."""
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
        mode = mode or ("hybrid" if self.settings.hybrid else "pagerank")
        timings: dict[str, float] = {}
        t = time.perf_counter()
        if mode == "dense":
            self.store.require_namespace(ns)
            graph = ""
        else:
            graph = self.ensure_projection(ns)  # also the check that the namespace exists
        timings["projection"] = time.perf_counter() - t

        t = time.perf_counter()
        tin = tout = 0
        if entities is None and self.settings.linking == "names":
            names, matches = self.link(ns, query)
            timings["linking"] = time.perf_counter() - t
        else:
            if entities is not None:
                ents = [Concept("other", e) for e in entities if normalize_name(e)]
            else:
                ents, tin, tout = self.query_entities(query, run_id, ns)
            timings["ner"] = time.perf_counter() - t
            t = time.perf_counter()
            names = [c.name for c in ents]
            matches = self.match(ns, query, ents) if ents else []
            timings["matching"] = time.perf_counter() - t
        weighted = restart_weights(matches, self.settings.weighting, self.settings.restart_split)
        result = RetrievalResult(query, ns, names, weighted, [], mode, None, timings, tin, tout)

        vector: list[float] | None = None
        if mode != "dense" and self.settings.passage_seed_weight > 0:
            t = time.perf_counter()
            vector = self.embedder.embed([query])[0].tolist()
            timings["embedding"] = time.perf_counter() - t
        unlinked = "no entities found in the query" if not names else "no concept matched the query"
        if mode == "dense" or not (weighted or vector):
            if mode != "dense":
                result.mode = "dense"
                result.fallback_reason = unlinked
                log.info("falling back to dense retrieval: %s", result.fallback_reason)
            t = time.perf_counter()
            result.passages = self.dense(ns, query, k)
            timings["dense"] = time.perf_counter() - t
            return result
        if not weighted:
            result.fallback_reason = f"{unlinked}: the walk starts from similar passages alone"
            log.info("%s", result.fallback_reason)

        t = time.perf_counter()
        want = k if mode == "pagerank" else max(k, 50)
        try:
            ranked = self.pagerank(graph, ns, weighted, want, vector)
        except ClientError as e:
            if not gds.missing_graph(e):
                raise
            # Dropped since this client last saw it (another process, a restart): project again.
            log.info("projection %s is gone; projecting again", graph)
            self._projected.pop(ns, None)
            graph = self.ensure_projection(ns)
            ranked = self.pagerank(graph, ns, weighted, want, vector)
        timings["pagerank"] = time.perf_counter() - t
        if mode == "hybrid":
            t = time.perf_counter()
            ranked = rrf_fuse([ranked, self.dense(ns, query, max(k, 50))], k)
            timings["dense"] = time.perf_counter() - t
        result.passages = ranked[:k]
        return result

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
        comp = self.llm.complete(
            reader_messages(query, res.passages),
            stage=Stage.ANSWER,
            run_id=run_id,
            max_tokens=READER_MAX_TOKENS,
        )
        return AnswerResult(comp.text.strip(), res, comp.input_tokens, comp.output_tokens)


def rrf_fuse(
    rankings: Sequence[Sequence[RetrievedPassage]], k: int, c: int = 60
) -> list[RetrievedPassage]:
    """Reciprocal rank fusion: scores of different scales (PageRank mass, cosine) are not added."""
    scores: dict[str, float] = {}
    first: dict[str, RetrievedPassage] = {}
    for ranking in rankings:
        for rank, p in enumerate(ranking):
            scores[p.id] = scores.get(p.id, 0.0) + 1.0 / (c + rank + 1)
            first.setdefault(p.id, p)
    best = sorted(scores, key=lambda pid: -scores[pid])[:k]
    return [
        RetrievedPassage(
            first[pid].id, first[pid].doc_id, first[pid].title, first[pid].text, scores[pid]
        )
        for pid in best
    ]


READER_SYSTEM = (
    "Answer the question from the passages. Reply with the answer only: a few words, no sentence."
)
# EM/F1 expect a few words; the cap also stops a small model that rambles from costing minutes.
READER_MAX_TOKENS = 32


def reader_messages(query: str, passages: Sequence[RetrievedPassage]) -> list[Message]:
    context = "\n\n".join(f"[{i}] {p.title}\n{p.text}" for i, p in enumerate(passages, 1))
    return [
        Message("system", READER_SYSTEM),
        Message("user", f"Passages:\n{context}\n\nQuestion: {query}\nAnswer:"),
    ]
