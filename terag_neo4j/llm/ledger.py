"""What crosses the LLM boundary: messages, completions, and the ledger of every call's tokens."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class Stage(StrEnum):
    EXTRACTION = "index_extraction"
    QUERY_NER = "query_ner"
    ANSWER = "answer"
    RERANK = "rerank"  # the reranker's tokens: a local cross-encoder's or an endpoint's


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass(frozen=True)
class Completion:
    """One reply. Token counts are the server's own; None where it sent none (an
    OpenAI-compatible server without a `usage` block): unknown, never a guess."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    duration_s: float  # wall clock of the successful request, as the caller waited for it
    model: str
    done_reason: str | None
    prompt_eval_s: float | None = None  # server-side time spent on the prompt
    eval_s: float | None = None  # server-side time spent generating

    @property
    def counted(self) -> bool:
        return self.input_tokens is not None and self.output_tokens is not None

    @property
    def cut(self) -> bool:
        """The reply stopped at the output limit: what came is a prefix, not a whole reply."""
        return self.done_reason == "length"


@dataclass(frozen=True)
class LLMCall:
    stage: Stage
    run_id: str
    model: str
    input_tokens: int | None  # None: the server sent no count
    output_tokens: int | None
    duration_s: float
    items: int

    @property
    def counted(self) -> bool:
        return self.input_tokens is not None and self.output_tokens is not None


@dataclass(frozen=True)
class TokenTotals:
    calls: int
    input_tokens: int
    output_tokens: int
    items: int
    # Calls whose server sent no token counts: the counts above leave them out
    uncounted: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def input_per_item(self) -> float:
        return self.input_tokens / self.items if self.items else 0.0

    @property
    def output_per_item(self) -> float:
        return self.output_tokens / self.items if self.items else 0.0


def _sum(calls: Sequence[LLMCall]) -> TokenTotals:
    return TokenTotals(
        calls=len(calls),
        input_tokens=sum(c.input_tokens or 0 for c in calls if c.counted),
        output_tokens=sum(c.output_tokens or 0 for c in calls if c.counted),
        items=sum(c.items for c in calls if c.counted),
        uncounted=sum(1 for c in calls if not c.counted),
    )


class TokenLedger:
    """Every LLM call of a process, by stage and run; safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[LLMCall] = []

    def record(self, call: LLMCall) -> None:
        with self._lock:
            self._calls.append(call)

    @property
    def calls(self) -> list[LLMCall]:
        with self._lock:
            return list(self._calls)

    def totals(self, stage: Stage | None = None, run_id: str | None = None) -> TokenTotals:
        return _sum(
            [
                c
                for c in self.calls
                if (stage is None or c.stage == stage) and (run_id is None or c.run_id == run_id)
            ]
        )

    def by_stage(self, run_id: str | None = None) -> dict[Stage, TokenTotals]:
        calls = [c for c in self.calls if run_id is None or c.run_id == run_id]
        return {
            stage: _sum([c for c in calls if c.stage == stage])
            for stage in Stage
            if any(c.stage == stage for c in calls)
        }

    def summary(self, run_id: str | None = None) -> str:
        header = (
            f"{'stage':<18}{'calls':>7}{'items':>7}{'input':>10}{'output':>10}"
            f"{'in/item':>10}{'out/item':>10}{'unknown':>9}"
        )
        rows = [header, "-" * len(header)]
        stages: list[tuple[str, TokenTotals]] = [
            (str(stage), totals) for stage, totals in self.by_stage(run_id).items()
        ]
        stages.append(("total", self.totals(run_id=run_id)))
        for name, t in stages:
            rows.append(
                f"{name:<18}{t.calls:>7}{t.items:>7}{_count(t, t.input_tokens):>10}"
                f"{_count(t, t.output_tokens):>10}{_mean(t, t.input_per_item):>10}"
                f"{_mean(t, t.output_per_item):>10}{t.uncounted:>9}"
            )
        unknown = self.totals(run_id=run_id).uncounted
        if unknown:
            rows.append(
                f"token counts unknown for {unknown} call(s): the server sent no usage; a "
                "count marked +? leaves those calls out, and per item is over the counted calls"
            )
        return "\n".join(rows)


def _count(t: TokenTotals, n: int) -> str:
    """A stage's count: `unknown` if no call was counted, `n+?` if some were not."""
    if t.uncounted and t.uncounted == t.calls:
        return "unknown"
    return f"{n}+?" if t.uncounted else str(n)


def _mean(t: TokenTotals, value: float) -> str:
    return "unknown" if t.uncounted and t.uncounted == t.calls else f"{value:.1f}"
