"""What one method's run over a dataset's questions records, and how each question is scored:
by its gold passages (Recall@k), or by answer coverage when only reference answers exist."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from terag_bench.datasets import Dataset, Question
from terag_bench.scoring import (
    COVERAGE_HIT,
    answer_coverage,
    content_words,
    mean,
    percentile,
    recall_at_k,
)
from terag_bench.token_figures import per, total
from terag_neo4j.indexing.loading import Passage

TOP_K = 5
KS = (2, 5)


@dataclass
class QuestionRun:
    id: str
    retrieved: list[str]
    # R@2, R@5 (gold passages), or cov@5, hit@5 (reference answers) and, where the question
    # names the file it is about, book@5: the top 5 holds a passage of that file
    scores: dict[str, float]
    latency_ms: float
    input_tokens: int | None = 0  # None: the LLM server sent no count
    output_tokens: int | None = 0
    fallback: str | None = None
    entities: list[str] | None = None
    type: str | None = None
    linked: bool | None = None  # whether the question linked a concept that steered the walk


@dataclass
class MethodRun:
    name: str
    family: str  # bm25 | dense | terag
    extractor: str | None = None
    variant: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    namespace: str | None = None
    questions: list[QuestionRun] = field(default_factory=list)
    stage_ms: dict[str, float] = field(default_factory=dict)
    projection_s: float = 0.0

    def scores(self, questions: Sequence[QuestionRun] | None = None) -> dict[str, float]:
        qs = self.questions if questions is None else questions
        names = list(qs[0].scores) if qs else []
        return {k: round(mean([q.scores[k] for q in qs]), 6) for k in names}

    def summary(self, index_tokens: tuple[int | None, int | None] = (0, 0)) -> dict[str, Any]:
        lat = [q.latency_ms for q in self.questions]
        n = len(self.questions)
        tin = total(q.input_tokens for q in self.questions)
        tout = total(q.output_tokens for q in self.questions)
        scores = self.scores()
        types = sorted({q.type for q in self.questions if q.type})
        linked = [q.linked for q in self.questions if q.linked is not None]
        return {
            "family": self.family,
            "extractor": self.extractor,
            "variant": self.variant,
            "overrides": self.overrides,
            "namespace": self.namespace,
            "questions": n,
            "scores": scores,
            # R@k as "2", "5" (the shape earlier results and the budget curve read)
            "recall": {str(k): scores[f"R@{k}"] for k in KS} if f"R@{KS[0]}" in scores else None,
            "by_type": {
                t: {"questions": len(qs), **self.scores(qs)}
                for t in types
                if (qs := [q for q in self.questions if q.type == t])
            },
            "linked_share": round(sum(linked) / len(linked), 4) if linked else None,
            "latency_ms": {
                "p50": round(percentile(lat, 50), 3),
                "p95": round(percentile(lat, 95), 3),
                "mean": round(mean(lat), 3),
            },
            "stage_ms_mean": {k: round(v, 3) for k, v in sorted(self.stage_ms.items())},
            "projection_s": round(self.projection_s, 3),
            "query_tokens": {
                "input": tin,
                "output": tout,
                "input_per_query": per(tin, n),
                "output_per_query": per(tout, n),
            },
            "index_tokens": {"input": index_tokens[0], "output": index_tokens[1]},
            "fallbacks": sum(1 for q in self.questions if q.fallback),
            "per_question": [
                {
                    "id": q.id,
                    "retrieved": q.retrieved,
                    "scores": q.scores,
                    "latency_ms": round(q.latency_ms, 3),
                    "tokens": [q.input_tokens, q.output_tokens],
                    **({"type": q.type} if q.type else {}),
                    **({"fallback": q.fallback} if q.fallback else {}),
                }
                for q in self.questions
            ],
        }


class Scorer:
    """How a dataset's questions are scored: by their gold passages, or by answer coverage."""

    def __init__(self, dataset: Dataset, passages: Sequence[Passage]) -> None:
        self.coverage = dataset.kind == "coverage"
        self.text = {p.id: p.text for p in passages} if self.coverage else {}
        # a passage's file by its stem, e.g. "Novel-1234" for /…/corpus/Novel-1234.txt
        self.file = {p.id: Path(p.doc_id).stem for p in passages} if self.coverage else {}

    def __call__(self, retrieved: Sequence[str], q: Question) -> dict[str, float]:
        if self.coverage:
            top = retrieved[:TOP_K]
            cov = answer_coverage(q.answers[0], [self.text[i] for i in top])
            out = {f"cov@{TOP_K}": cov, f"hit@{TOP_K}": float(cov >= COVERAGE_HIT)}
            if q.source:
                out[f"book@{TOP_K}"] = float(any(self.file.get(i) == q.source for i in top))
            return out
        return {f"R@{k}": recall_at_k(retrieved, q.gold_ids, k) for k in KS}

    def ceiling(self, questions: Sequence[Question]) -> MethodRun:
        """What no ranking of these passages can beat: each question's passage of highest answer
        coverage, as if ranked first. Coverage is the best share in any one passage, so where
        the answer's words are spread over several passages, no top k reaches a hit."""
        postings: dict[str, list[str]] = {}
        for pid, text in self.text.items():
            for w in content_words(text):
                postings.setdefault(w, []).append(pid)
        run = MethodRun(name="ceiling", family="ceiling")
        for q in questions:
            shared = Counter(p for w in content_words(q.answers[0]) for p in postings.get(w, ()))
            best = [max(shared, key=shared.__getitem__)] if shared else []
            # which book its best passage is in says nothing about the ranking: no book@5
            scores = {k: v for k, v in self(best, q).items() if not k.startswith("book@")}
            run.questions.append(QuestionRun(q.id, best, scores, 0.0, type=q.type))
        return run


def run_simple(
    name: str,
    family: str,
    questions: Sequence[Question],
    retrieve: Callable[[str, int], list[str]],
    score: Scorer,
) -> MethodRun:
    run = MethodRun(name=name, family=family)
    for q in questions:
        t = time.perf_counter()
        ids = retrieve(q.question, TOP_K)
        ms = (time.perf_counter() - t) * 1000
        run.questions.append(QuestionRun(q.id, ids, score(ids, q), ms, type=q.type))
    return run
