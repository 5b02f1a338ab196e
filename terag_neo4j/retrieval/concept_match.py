"""Concept matching against the graph: the question's linked n-grams (`linking`) or its NER
entities looked up among a namespace's concepts, exactly or by nearest embedding."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from terag_neo4j.core.concepts import Concept
from terag_neo4j.core.results import MatchedConcept
from terag_neo4j.retrieval.linking import question_spans, select_links, span_keys
from terag_neo4j.store import GraphStore
from terag_neo4j.store.search import VECTOR_DIMENSIONS


def link_names(
    store: GraphStore, namespace: str, query: str, skip_types: Sequence[str]
) -> tuple[list[str], list[MatchedConcept]]:
    """Concepts the question names, found by looking its n-grams up (zero tokens, no NER): by
    name, or by inflection-insensitive stem where no name matches. Returns the linked names and
    every concept they match."""
    spans = question_spans(query)
    norms, stems = span_keys(spans)
    rows = (
        store.read(
            "match_names", namespace=namespace, norms=norms, stems=stems, skip_types=skip_types
        )
        if norms
        else []
    )
    by_norm: dict[str, list[dict[str, Any]]] = {}
    by_stem: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        (by_norm if r["by"] == "norm" else by_stem).setdefault(r["key"], []).append(r)
    names: list[str] = []
    matches: list[MatchedConcept] = []
    for s in select_links(spans, set(by_norm), set(by_stem)):
        hits = by_norm.get(s.norm) or by_stem.get(s.stem, [])
        names.append(hits[0]["name"])
        matches += [_matched(s.norm, r, r["ckey"], "exact", 1.0) for r in hits]
    return names, matches


@dataclass(frozen=True)
class SemanticMatch:
    """How entities without an exact name match find their nearest concepts."""

    top_n: int  # concepts per entity; 0 turns semantic matching off
    embedder: Any  # an `Embedder` or `CachedEmbedder`


def match_entities(
    store: GraphStore,
    namespace: str,
    query: str,
    entities: Sequence[Concept],
    *,
    semantic: SemanticMatch,
    skip_types: Sequence[str],
    ensure_vectors: Callable[[], None],
) -> list[MatchedConcept]:
    """The paper's matching: each NER entity's exact name, else its nearest concepts by
    embedding (`ensure_vectors` writes the namespace's concept vectors first, when needed)."""
    norms = sorted({c.norm for c in entities if c.norm})
    by_norm: dict[str, list[dict[str, Any]]] = {}
    if norms:
        for r in store.read("match_exact", namespace=namespace, norms=norms, skip_types=skip_types):
            by_norm.setdefault(r["norm"], []).append(r)
    matches: list[MatchedConcept] = []
    unmatched: list[Concept] = []
    for c in entities:
        hits = by_norm.get(c.norm)
        if not hits:
            unmatched.append(c)
            continue
        matches += [_matched(c.name, r, r["key"], "exact", 1.0) for r in hits]
    if unmatched and semantic.top_n > 0:
        ensure_vectors()
        names = [c.name for c in unmatched]
        vectors = semantic.embedder.embed(names)
        for owner, vec in zip(names, vectors, strict=True):
            for r in _nearest(store, namespace, vec.tolist(), semantic.top_n, skip_types):
                matches.append(_matched(owner, r, r["key"], "semantic", float(r["similarity"])))
    return matches


def _nearest(
    store: GraphStore, namespace: str, vector: list[float], n: int, skip: Sequence[str]
) -> list[dict[str, Any]]:
    """The `n` concepts nearest `vector`: from the vector index, or by a scan where the index's
    candidates run short of `n` (skipped types filtered out after the search), or where the
    namespace's model makes vectors of another size than the shared index holds."""
    rows: list[dict[str, Any]] = []
    if len(vector) == VECTOR_DIMENSIONS:
        rows = store.read(
            "match_semantic",
            namespace=namespace,
            vector=vector,
            candidates=n * 20,
            top_n=n,
            skip_types=skip,
        )
    if len(rows) < n:
        rows = store.read(
            "match_semantic_scan", namespace=namespace, vector=vector, top_n=n, skip_types=skip
        )
    return rows


def _matched(
    entity: str, r: dict[str, Any], key: str, kind: Literal["exact", "semantic"], similarity: float
) -> MatchedConcept:
    return MatchedConcept(
        entity,
        r["uid"],
        key,
        r["name"],
        r["type"],
        kind,
        similarity,
        int(r["frequency"] or 0),
        node=int(r["node"]),
    )
