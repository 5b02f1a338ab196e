"""Non-graph baselines over the same passages: BM25 (bm25s) and dense cosine retrieval.

Both index `title + "\\n" + text`, as TERAG and HippoRAG do. Dense retrieval is an exact scan
over the cached passage vectors (the configured model's, the same vectors TERAG stores in
Neo4j), so it is the dense ceiling of that model, with no approximate index in between.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from terag_neo4j.core.documents import Document

log = logging.getLogger(__name__)


def passage_text(doc: Document) -> str:
    # Exactly `Passage.content`, so the embedding cache shared with indexing hits.
    text = doc.text.strip()
    return f"{doc.title}\n{text}" if doc.title else text


class TextEmbedder(Protocol):
    def embed(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]: ...


class BM25Baseline:
    """Okapi BM25 (k1=1.5, b=0.75, bm25s's 'lucene' variant), English stopwords, no stemming."""

    name = "bm25"

    def __init__(self, documents: Sequence[Document]) -> None:
        import bm25s

        self._ids = [d.id for d in documents]
        self._bm25s = bm25s
        tokens = bm25s.tokenize(
            [passage_text(d) for d in documents], stopwords="en", show_progress=False
        )
        self._model = bm25s.BM25()
        self._model.index(tokens, show_progress=False)

    def retrieve(self, query: str, k: int) -> list[str]:
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.ids or not tokens.ids[0]:
            return []  # only stopwords: BM25 scores nothing
        k = min(k, len(self._ids))
        docs, scores = self._model.retrieve(tokens, k=k, show_progress=False, n_threads=0)
        return [self._ids[int(i)] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]


class DenseBaseline:
    """Exact cosine top-k over L2-normalised passage vectors."""

    name = "dense"

    def __init__(self, documents: Sequence[Document], embedder: TextEmbedder) -> None:
        self._ids = [d.id for d in documents]
        self._embedder = embedder
        self._matrix = np.asarray(
            embedder.embed([passage_text(d) for d in documents]), dtype=np.float32
        )

    def retrieve(self, query: str, k: int) -> list[str]:
        from terag_neo4j.store.namespace_embedder import embed_query  # the model's query prefix

        q = np.asarray(embed_query(self._embedder, query), dtype=np.float32)  # type: ignore[arg-type]
        scores = self._matrix @ q
        # Stable sort on the negated scores: ties keep corpus order, so runs are reproducible.
        order = np.argsort(-scores, kind="stable")[:k]
        return [self._ids[int(i)] for i in order]
