"""The flat rankings a walk starts from: the question's best passages by words and by meaning.

Words: Neo4j's full-text (Lucene) index, BM25 over title and text with English stemming.
Meaning: the vector index over passage embeddings. Both are searched inside the namespace and
cut at their top `flat_top`; each is min-max scaled over that top and the two are averaged, so a
passage both find ranks first and one only a single channel finds still counts. That relevance
seeds the walk's passages and tells how far a linked concept is supported by the text
(`restart.py`). Both searches cost the same whatever the corpus size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from terag_neo4j.extraction import normalize_name
from terag_neo4j.linking import stopwords
from terag_neo4j.store import GraphStore
from terag_neo4j.store.ids import namespace_key


def lucene_query(namespace: str, question: str) -> str | None:
    """`+nskey:<key> +(<words>)`: the question's content words, none of Lucene's syntax (words
    are letters and digits after normalisation); None when no word is left."""
    words = [w for w in normalize_name(question).split() if w not in stopwords() and len(w) > 1]
    if not words:
        return None
    return f"+nskey:{namespace_key(namespace)} +({' '.join(dict.fromkeys(words))})"


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

    def top(self, n: int) -> list[tuple[int, float]]:
        ranked = sorted(self.relevance.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:n] if n > 0 else ranked


def flat_ranking(
    store: GraphStore,
    namespace: str,
    question: str,
    vector: Sequence[float],
    top: int,
) -> FlatRanking:
    (row,) = store.read(
        "flat",
        namespace=namespace,
        lucene=lucene_query(namespace, question),
        vector=list(vector),
        top=top,
    )
    text, dense = _scaled(row["text"]), _scaled(row["vector"])
    channels = [c for c in (text, dense) if c]
    relevance = {
        n: sum(c.get(n, 0.0) for c in channels) / len(channels) for n in set(text) | set(dense)
    }
    return FlatRanking(relevance, len(text), len(dense))
