"""Paired bootstrap intervals for the difference of two methods' per-question scores.

The methods answered the same questions, so a question's two scores are a pair: resampling
questions (not scores) keeps what makes one question easy for both, and the interval is the
spread of the mean difference over resamples (percentile method). A fixed seed makes a rerun
print the same interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from terag_neo4j.errors import TeragError

RESAMPLES = 10_000
SEED = 0
LEVEL = 0.95
# Resamples drawn at a time: their index matrix is CHUNK x questions integers, so memory
# stays bounded whatever the number of questions.
CHUNK = 1_000


class BootstrapError(TeragError, ValueError):
    """Scores that are not pairs, or a resampling that cannot be made; the message says which."""


@dataclass(frozen=True)
class Interval:
    observed: float  # mean(a) - mean(b) over all questions
    low: float
    high: float

    def as_dict(self, digits: int = 4) -> dict[str, float]:
        return {
            "observed": round(self.observed, digits),
            "low": round(self.low, digits),
            "high": round(self.high, digits),
        }


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval | None:
    """The `level` percentile interval of mean(a - b) over `resamples` resamples of the pairs;
    None when there is no pair."""
    if len(a) != len(b):
        raise BootstrapError(f"paired scores differ in length: {len(a)} and {len(b)}")
    if resamples < 1 or not 0.0 < level < 1.0:
        raise BootstrapError("resamples must be at least 1 and level within (0, 1)")
    n = len(a)
    if n == 0:
        return None
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, CHUNK):
        size = min(CHUNK, resamples - start)
        idx = rng.integers(0, n, size=(size, n))
        means[start : start + size] = diff[idx].mean(axis=1)
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Interval(float(diff.mean()), float(low), float(high))
