"""Retrieval and answer metrics, as the published baselines compute them.

- Recall@k is HippoRAG's: |gold ∩ top-k| / |gold| per question, averaged over questions.
- Answer coverage (for corpora without gold passages, e.g. GraphRAG-Bench's medical guidelines):
  the largest share of the reference answer's content words in any one of the top-k passages;
  hit@k = coverage >= 0.75.
- EM and F1 follow the SQuAD v1.1 evaluation script (lower-case, strip punctuation and the
  articles a/an/the, collapse whitespace), taking the best score over the answer's aliases.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from terag_bench.datasets import DatasetError
from terag_neo4j.config import SettingsError

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def recall_at_k(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold passages found in the first `k` retrieved ones."""
    if k <= 0:
        raise SettingsError("k must be at least 1")
    gold_set = set(gold)
    if not gold_set:
        raise DatasetError("a question without gold passages has no recall")
    return len(gold_set & set(retrieved[:k])) / len(gold_set)


def content_words(text: str) -> set[str]:
    """Lower-cased [a-z0-9]+ tokens longer than two characters that are not English stopwords
    (spaCy's list): what answer coverage counts (../shared/datasets/README.md)."""
    from terag_neo4j.core.concepts import stopwords

    stop = stopwords()
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in stop}


def answer_coverage(answer: str, passages: Sequence[str]) -> float:
    """The largest share of the answer's content words found in any one of the passages."""
    wanted = content_words(answer)
    if not wanted:
        return 0.0
    return max((len(wanted & content_words(p)) / len(wanted) for p in passages), default=0.0)


COVERAGE_HIT = 0.75  # hit@k: coverage of at least this


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, truth: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(truth))


def f1(prediction: str, truth: str) -> float:
    pred = normalize_answer(prediction).split()
    gold = normalize_answer(truth).split()
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


def best_over_aliases(prediction: str, aliases: Sequence[str]) -> tuple[float, float]:
    """(EM, F1) of `prediction` against its best-matching alias; (0, 0) without aliases."""
    if not aliases:
        return 0.0, 0.0
    return (
        max(exact_match(prediction, a) for a in aliases),
        max(f1(prediction, a) for a in aliases),
    )


def mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default); 0 for no values."""
    if len(values) == 0:
        return 0.0
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def percentile_ms(seconds: Sequence[float], q: float) -> float | None:
    """The q-th percentile of durations in seconds, in milliseconds to 0.1; None for none."""
    return round(percentile(seconds, q) * 1000, 1) if len(seconds) else None
