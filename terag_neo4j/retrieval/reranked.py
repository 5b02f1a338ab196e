"""The reranker stage, off unless TERAG_RERANKER names a model: after the final ranking (the
walk's, flat's, dense's or hybrid's), the top TERAG_RERANK_TOP passages are scored against the
question by the reranker and returned in its order, its scores in place of theirs (the
result's `score_kind` is then `rerank`). Ties keep the ranking's order.

The stage's time is the result's `rerank` timing, and each call is one `rerank` row of the
client's token ledger (the tokens it scored: a local model's pair tokens, an endpoint's
reported usage).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Sequence

import numpy as np

from terag_neo4j import tracing
from terag_neo4j.core.results import Mode, RetrievalResult, RetrievedPassage
from terag_neo4j.llm.ledger import LLMCall, Stage
from terag_neo4j.reranking.rerankers import Reranker, RerankError, Scores, make_reranker
from terag_neo4j.retrieval.retriever import RetrievalError, Retriever

log = logging.getLogger(__name__)


class NoReranker(RetrievalError):
    """Reranking was asked for where no reranker is set (a caller's error, not the model's)."""


def reranked(
    passages: Sequence[RetrievedPassage], scores: Scores, k: int
) -> list[RetrievedPassage]:
    """The passages in the reranker's order (ties in theirs), its scores in place, the top k."""
    order = sorted(range(len(passages)), key=lambda i: (-float(scores[i]), i))
    return [dataclasses.replace(passages[i], score=float(scores[i])) for i in order[:k]]


def passage_text(p: RetrievedPassage) -> str:
    # What the reranker reads: the title carries what the text leaves implicit (as for embedding)
    return f"{p.title}\n{p.text}" if p.title else p.text


class RerankedRetriever(Retriever):
    """A `Retriever` whose rankings go through the reranker where one is set (or asked for)."""

    _reranker: Reranker | None = None
    _rerank_lock = threading.Lock()

    @property
    def reranker(self) -> Reranker | None:
        """TERAG_RERANKER's model, loaded on first use (None: no reranker is set)."""
        spec = self.settings.reranker
        if spec and self._reranker is None:
            with self._rerank_lock:
                if self._reranker is None:
                    key = self.settings.reranker_api_key
                    secret = key.get_secret_value() if key else None
                    self._reranker = make_reranker(spec, secret)
        return self._reranker

    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        namespace: str | None = None,
        entities: Sequence[str] | None = None,
        run_id: str = "query",
        mode: Mode | None = None,
        rerank: bool | None = None,
    ) -> RetrievalResult:
        """`Retriever.retrieve`, then the reranker over its top `rerank_top` when one is set
        (`rerank`: None follows TERAG_RERANKER, False skips it, True requires it)."""
        use = bool(self.settings.reranker) if rerank is None else rerank
        if use and not self.settings.reranker:
            raise NoReranker(
                "reranking was asked for but no reranker is set: set TERAG_RERANKER, or ask "
                "without rerank"
            )
        k = self.settings.top_k if top_k is None else top_k
        wide = k if not use or isinstance(k, bool) or not isinstance(k, int) or k <= 0 else None
        n = wide if wide is not None else max(k, self.settings.rerank_top)
        result = super().retrieve(
            query, top_k=n, namespace=namespace, entities=entities, run_id=run_id, mode=mode
        )
        if wide is not None or not result.passages:
            return result
        model = self.reranker
        assert model is not None
        with tracing.stage("rerank", result.timings):
            scores, tokens = model.score(query, [passage_text(p) for p in result.passages])
            if len(scores) != len(result.passages) or not np.isfinite(scores).all():
                raise RerankError(
                    f"the reranker {model.name} gave no finite score to every passage"
                )
            result.passages = reranked(result.passages, scores, k)
            result.reranker = model.name
        elapsed = result.timings["rerank"]
        if self.ledger is not None:
            n_in = len(scores)
            self.ledger.record(LLMCall(Stage.RERANK, run_id, model.name, tokens, 0, elapsed, n_in))
        return result
