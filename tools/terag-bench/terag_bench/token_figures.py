"""Token figures as reports show them: a sum or a mean over LLM calls is unknown (None) as soon
as one call's count is unknown (its server sent none); it is never a guess that counts it as 0."""

from __future__ import annotations

from collections.abc import Iterable

UNKNOWN = "unknown"


def total(counts: Iterable[int | None]) -> int | None:
    """The sum of the counts; None if any is unknown."""
    out = 0
    for c in counts:
        if c is None or c < 0:  # caches store an unknown count as -1
            return None
        out += c
    return out


def per(amount: int | None, n: int, digits: int = 2) -> float | None:
    """`amount` per item, rounded; None where the amount is unknown."""
    if amount is None:
        return None
    return round(amount / n, digits) if n else 0.0


def show(value: float | None, spec: str = ".1f") -> str:
    """A figure for a table: `unknown` in place of a count the server did not send."""
    return UNKNOWN if value is None else format(value, spec)


def pair(a: float | None, b: float | None, spec: str = ".1f") -> str:
    """`in/out` for a table cell, `unknown` where either is unknown."""
    if a is None or b is None:
        return UNKNOWN
    return f"{format(a, spec)}/{format(b, spec)}"
