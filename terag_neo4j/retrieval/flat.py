"""The flat rankings a walk starts from: the question's best passages by words and by meaning.

Words: Neo4j's full-text (Lucene) index, BM25 over title and text with English stemming.
Meaning: the vector index over passage embeddings. Both indexes are the namespace's own
(`store/search.py`), so its scores depend on its passages alone; each ranking is cut at its top
`flat_top`; each is min-max scaled over that top and the two are averaged (weighted by
`dense_share`, half each by default), so a passage both find ranks first and one only a single
channel finds still counts. That relevance seeds the walk's passages and tells how far a linked
concept is supported by the text (`restart.py`). Both searches cost the same whatever the
corpus size.

The `flat` mode (`flat_passages`) returns the same two rankings fused by reciprocal rank,
without the graph: the baseline to compare the walk with.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from terag_neo4j import tracing
from terag_neo4j.core.concepts import normalize_name, stopwords
from terag_neo4j.core.results import RetrievedPassage
from terag_neo4j.store import GraphStore
from terag_neo4j.store.ids import fold, text_index, vector_index

# Passages read past each ranking's cut, so that equal scores at the cut are ordered by uid
# rather than by Lucene's document order (which segment merges change).
TIE_SPARE = 20


def lucene_query(question: str) -> str | None:
    """The question's content words, folded as the index's text is, none of Lucene's syntax
    (words are letters and digits after normalisation); None when no word is left."""
    words = [
        w for w in normalize_name(fold(question)).split() if w not in stopwords() and len(w) > 1
    ]
    return " ".join(dict.fromkeys(words)) or None


def _scaled(pairs: Sequence[Sequence[float]] | None) -> dict[int, float]:
    """[node, score] pairs min-max scaled over the ranking itself: its last passage 0, its
    first 1."""
    scores = {int(n): float(sc) for n, sc in pairs or []}
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi <= lo:
        return dict.fromkeys(scores, 1.0)
    return {n: (s - lo) / (hi - lo) for n, s in scores.items()}


@dataclass
class FlatRanking:
    """Relevance in [0, 1] of the passages (GDS node ids) either channel ranked."""

    relevance: dict[int, float] = field(default_factory=dict)
    by_text: int = 0  # passages each channel returned
    by_vector: int = 0
    # each channel's nodes best first, for the final ranking (`final_rank.py`)
    text_order: list[int] = field(default_factory=list)
    vector_order: list[int] = field(default_factory=list)
    vector_first: str | None = None  # the passage id of vector_order[0]
    # each channel's raw scores, aligned with its order (the learned final ranking scales them
    # per question, so an embedder's or Lucene's own scale does not matter)
    text_scores: list[float] = field(default_factory=list)
    vector_scores: list[float] = field(default_factory=list)
    # linked concept node -> the ranked passages naming it (`Retriever.concept_weights`)
    support: dict[int, list[int]] = field(default_factory=dict)

    def top(self, n: int) -> list[tuple[int, float]]:
        ranked = sorted(self.relevance.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:n] if n > 0 else ranked


def _both_rankings(
    store: GraphStore,
    statement: str,
    namespace: str,
    question: str,
    vector: Sequence[float],
    top: int,
) -> dict[str, Any]:
    """One round trip for the full-text and the vector ranking (`flat`: node ids and scores,
    `flat_passages`: whole passages), each cut at `top`."""
    (row,) = store.read(
        statement,
        text_index=text_index(namespace),
        vector_index=vector_index(namespace),
        lucene=lucene_query(question),
        vector=list(vector),
        top=top,
        spare=TIE_SPARE,
    )
    return row


def _text_ranking(store: GraphStore, namespace: str, question: str, top: int) -> dict[str, Any]:
    (row,) = store.read(
        "flat_text",
        text_index=text_index(namespace),
        lucene=lucene_query(question),
        top=top,
        spare=TIE_SPARE,
    )
    return row


def flat_ranking(
    store: GraphStore,
    namespace: str,
    question: str,
    vector: Sequence[float] | Callable[[], Sequence[float]],
    top: int,
    dense_share: float = 0.5,
) -> FlatRanking:
    """Both rankings scaled and fused. `vector` may be a call that waits for the question's
    vector (`overlap.Background`): the full-text ranking is then read first, while the question
    is still being embedded, and the vector ranking after (two round trips instead of one)."""
    if callable(vector):
        with tracing.stage("flat text"):
            row = _text_ranking(store, namespace, question, top)
        with tracing.stage("flat vector"):
            row |= store.read(
                "flat_vector",
                vector_index=vector_index(namespace),
                vector=list(vector()),
                top=top,
                spare=TIE_SPARE,
            )[0]
    else:
        row = _both_rankings(store, "flat", namespace, question, vector, top)
    text, dense = _scaled(row["text"]), _scaled(row["vector"])
    return FlatRanking(
        fuse_scaled(text, dense, dense_share),
        len(text),
        len(dense),
        [int(n) for n, _ in row["text"] or []],
        [int(n) for n, _ in row["vector"] or []],
        row.get("vector_first"),
        [float(sc) for _, sc in row["text"] or []],
        [float(sc) for _, sc in row["vector"] or []],
    )


def fuse_scaled(
    text: dict[int, float], dense: dict[int, float], dense_share: float
) -> dict[int, float]:
    """Each passage's relevance: its scaled full-text and vector scores weighted by
    1 - `dense_share` and `dense_share` (0 where a ranking lacks it). A ranking that found
    nothing (a question with no content word for the full-text index) leaves the other whole."""
    share = dense_share if text and dense else (1.0 if dense else 0.0)
    return {
        n: (1 - share) * text.get(n, 0.0) + share * dense.get(n, 0.0)
        for n in set(text) | set(dense)
    }


# Each ranking's depth in the `flat` mode: reciprocal rank fusion (c = 60) gives a passage past
# rank 50 of both lists less than a passage at rank 1 of one, so deeper lists change little.
FLAT_DEPTH = 50


def flat_passages(
    store: GraphStore, namespace: str, question: str, vector: Sequence[float], k: int
) -> list[RetrievedPassage]:
    """The `flat` mode: BM25 and vector rankings fused by reciprocal rank, no graph."""
    row = _both_rankings(store, "flat_passages", namespace, question, vector, max(FLAT_DEPTH, k))
    rankings = [[RetrievedPassage.from_row(r) for r in row[c] or []] for c in ("text", "vector")]
    return rrf_fuse(rankings, k)


def dense_passages(
    store: GraphStore, namespace: str, vector: Sequence[float], k: int
) -> list[RetrievedPassage]:
    """The `dense` mode: the namespace's vector index alone."""
    rows = store.read(
        "dense_passages",
        vector_index=vector_index(namespace),
        vector=list(vector),
        top_k=k,
        spare=TIE_SPARE,
    )
    return [RetrievedPassage.from_row(r) for r in rows]


K = TypeVar("K", bound=Hashable)
RRF_C = 60  # reciprocal rank fusion's constant, for the flat mode and the final ranking


def rrf_scores(rankings: Iterable[Sequence[K]], c: int = RRF_C) -> dict[K, float]:
    """Each item's reciprocal-rank-fusion score over `rankings` (best first each)."""
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + 1.0 / (c + rank + 1)
    return scores


def rrf_fuse(
    rankings: Sequence[Sequence[RetrievedPassage]], k: int, c: int = RRF_C
) -> list[RetrievedPassage]:
    """Reciprocal rank fusion: scores of different scales (PageRank mass, cosine) are not added."""
    scores = rrf_scores(([p.id for p in ranking] for ranking in rankings), c)
    first: dict[str, RetrievedPassage] = {}
    for ranking in rankings:
        for p in ranking:
            first.setdefault(p.id, p)
    best = sorted(scores, key=lambda pid: (-scores[pid], pid))[:k]  # ties by id
    return [replace(first[pid], score=scores[pid]) for pid in best]


# The vector ranking's first passage is the flat rankings' sure one (`anchor_node`: pinned first by
# final_rank.py's `anchored`, a feature of learned.py's) when their fusion has it this high.
ANCHOR_WITHIN = 2


def rrf_nodes(
    text: Sequence[int], vector: Sequence[int], depth: int = FLAT_DEPTH
) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of two rankings of node ids, each cut at `depth` (the `flat`
    mode's fusion): [(node, score)], best first, equal scores in node order."""
    scores = rrf_scores((text[:depth], vector[:depth]))
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def anchor_node(text: Sequence[int], vector: Sequence[int]) -> int | None:
    """The vector ranking's first node when the fused flat ranking has it in its top
    `ANCHOR_WITHIN`, else None."""
    if not vector:
        return None
    top = [n for n, _ in rrf_nodes(text, vector)[:ANCHOR_WITHIN]]
    return vector[0] if vector[0] in top else None


def pinned_first(nodes: Sequence[int], anchor: int | None) -> list[int]:
    """`nodes` with `anchor` first (moved up, or put before them): `anchored`'s order of node
    ids; `nodes` as they are without an anchor."""
    return list(nodes) if anchor is None else [anchor, *(n for n in nodes if n != anchor)]
