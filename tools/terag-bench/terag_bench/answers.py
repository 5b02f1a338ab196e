"""EM/F1 of one reader LLM over several methods' retrieved passages, cached and resumable.

A 1.5B reader on a shared 2-core CPU takes minutes per question, so a run over 100 questions
and three methods outlives a session. Every reader call is therefore cached on disk under the
exact prompt it sent (model, options, rendered messages: the reader prompt, the question and the
passages in rank order), so a rerun pays only for calls it has not made yet, and a changed prompt
can never be served a stale answer. Questions are answered one at a time for every method, so a
run cut short by its time budget still compares all methods on the same questions.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terag_bench.bootstrap import LEVEL, RESAMPLES, SEED, paired_bootstrap
from terag_bench.datasets import Question
from terag_bench.scoring import best_over_aliases, mean
from terag_bench.token_figures import per, total
from terag_neo4j.config import Settings
from terag_neo4j.core.results import RetrievedPassage
from terag_neo4j.core.sqlite_cache import open_cache
from terag_neo4j.indexing.loading import Document, content_hash
from terag_neo4j.llm import LLM, LLMError, Message, Stage, make_llm
from terag_neo4j.retrieval.answer import READER_MAX_TOKENS, reader_messages, strip_markers

log = logging.getLogger(__name__)

ANSWER_CACHE_FILE = "answers.sqlite3"


@dataclass(frozen=True)
class ReaderAnswer:
    prediction: str
    input_tokens: int | None  # None: the server sent no counts (stored as -1)
    output_tokens: int | None
    seconds: float  # wall clock of the call that paid for it
    cached: bool = False


class AnswerCache:
    """Reader answers keyed by everything that shapes them (see `key`)."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_cache(
            path,
            "CREATE TABLE IF NOT EXISTS answer (key TEXT PRIMARY KEY, model TEXT NOT NULL,"
            " prediction TEXT NOT NULL, input_tokens INTEGER NOT NULL,"
            " output_tokens INTEGER NOT NULL, seconds REAL NOT NULL)",
        )

    @staticmethod
    def key(model: str, options: Mapping[str, Any], messages: Sequence[Message]) -> str:
        # The rendered messages carry the prompt text, the question and the passages in order:
        # any change to one of them is a different key, so no version number can be forgotten.
        body = json.dumps(
            {
                "model": model,
                "options": dict(sorted(options.items())),
                "messages": [[m.role, m.content] for m in messages],
            },
            ensure_ascii=False,
        )
        return content_hash(body)

    def get(self, key: str) -> ReaderAnswer | None:
        with self._lock:
            row = self._db.execute(
                "SELECT prediction, input_tokens, output_tokens, seconds FROM answer WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        tin, tout = (int(row[1]), int(row[2])) if row[1] >= 0 <= row[2] else (None, None)
        return ReaderAnswer(row[0], tin, tout, float(row[3]), cached=True)

    def put(self, key: str, model: str, answer: ReaderAnswer) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answer VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model,
                    answer.prediction,
                    -1 if answer.input_tokens is None else answer.input_tokens,
                    -1 if answer.output_tokens is None else answer.output_tokens,
                    answer.seconds,
                ),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM answer").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedReader:
    """The LLM as a reader: short answers, each prompt paid for once."""

    def __init__(self, llm: LLM, cache: AnswerCache) -> None:
        self.llm = llm
        self.cache = cache
        # Only the options that change the answer; num_thread changes speed, not text.
        opts = llm.request_options(READER_MAX_TOKENS)
        self._key_options = {k: v for k, v in opts.items() if k != "num_thread"}

    def _key(self, question: str, passages: Sequence[RetrievedPassage]) -> str:
        return self.cache.key(
            self.llm.model, self._key_options, reader_messages(question, passages)
        )

    def is_cached(self, question: str, passages: Sequence[RetrievedPassage]) -> bool:
        return self.cache.get(self._key(question, passages)) is not None

    def answer(
        self, question: str, passages: Sequence[RetrievedPassage], run_id: str
    ) -> ReaderAnswer:
        messages = reader_messages(question, passages)
        key = self.cache.key(self.llm.model, self._key_options, messages)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        t = time.perf_counter()
        comp = self.llm.complete(
            messages, stage=Stage.ANSWER, run_id=run_id, max_tokens=READER_MAX_TOKENS
        )
        ans = ReaderAnswer(
            strip_markers(comp.text.strip()),
            comp.input_tokens,
            comp.output_tokens,
            time.perf_counter() - t,
        )
        self.cache.put(key, self.llm.model, ans)
        return ans


def answer_methods(
    reader: CachedReader,
    questions: Sequence[Question],
    retrieved: Mapping[str, Sequence[Sequence[str]]],
    docs_by_id: Mapping[str, Document],
    budget_s: float | None = None,
) -> dict[str, Any]:
    """Answer each question from every method's passages; stop starting questions after budget_s.

    `retrieved[method][i]` is the ranked passage ids the method retrieved for `questions[i]`.
    EM/F1 are averaged over the questions answered for every method (the same ones for all).
    """
    started = time.perf_counter()
    names = list(retrieved)
    per_q: dict[str, list[dict[str, Any]]] = {m: [] for m in names}
    fresh_s: list[float] = []
    cached = 0
    stopped_early = False
    for i, q in enumerate(questions):
        groups = {
            m: [
                RetrievedPassage(d.id, d.id, d.title, d.text, 0.0)
                for d in (docs_by_id[pid] for pid in retrieved[m][i])
            ]
            for m in names
        }
        spent = budget_s is not None and time.perf_counter() - started >= budget_s
        # Past the budget only questions the cache answers for every method (free) go on, so
        # `--answer-budget-s 0` reports what earlier runs paid for without a new call.
        if spent and not all(reader.is_cached(q.question, groups[m]) for m in names):
            stopped_early = True
            log.info("answers: time budget %.0f s spent after %d questions", budget_s, i)
            break
        for m in names:
            ans = reader.answer(q.question, groups[m], run_id=f"bench-answer-{m}")
            if ans.cached:
                cached += 1
            else:
                fresh_s.append(ans.seconds)
            em, f1 = best_over_aliases(ans.prediction, q.answers)
            per_q[m].append(
                {
                    "id": q.id,
                    "prediction": ans.prediction,
                    "em": em,
                    "f1": round(f1, 6),
                    "tokens": [ans.input_tokens, ans.output_tokens],
                    "seconds": round(ans.seconds, 3),
                    "cached": ans.cached,
                }
            )
        log.info(
            "answers: %d/%d questions (%d fresh calls, mean %.1f s; %d cached)",
            i + 1, len(questions), len(fresh_s), mean(fresh_s), cached,
        )  # fmt: skip
    methods: dict[str, Any] = {}
    for m in names:
        rows = per_q[m]
        n = len(rows)
        tin = total(r["tokens"][0] for r in rows)
        tout = total(r["tokens"][1] for r in rows)
        methods[m] = {
            "em": round(mean([r["em"] for r in rows]), 6),
            "f1": round(mean([r["f1"] for r in rows]), 6),
            "questions": n,
            "tokens": {
                "input": tin,
                "output": tout,
                "input_per_query": per(tin, n),
                "output_per_query": per(tout, n),
            },
            "model": reader.llm.model,
            "per_question": rows,
        }
    answered = len(per_q[names[0]]) if names else 0
    return {
        "methods": methods,
        "differences": differences(per_q),
        "model": reader.llm.model,
        "max_tokens": READER_MAX_TOKENS,
        "questions_answered": answered,
        "questions_total": len(questions),
        "complete": answered == len(questions),
        "stopped_by_budget": stopped_early,
        "budget_s": budget_s,
        "calls_fresh": len(fresh_s),
        "calls_cached": cached,
        "seconds_per_fresh_call": round(mean(fresh_s), 3),
        "wall_s": round(time.perf_counter() - started, 3),
    }


def reference_method(names: Sequence[str]) -> str | None:
    """The method the others are compared with: the default TERAG row (`terag-<extractor>`,
    not one of its variants), else the first."""
    return next(
        (m for m in names if m.startswith("terag-") and "/" not in m), next(iter(names), None)
    )


def differences(per_q: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """EM and F1 of the reference method minus each other method's, in percentage points, with
    a paired bootstrap interval over the questions all of them answered (the same ones, since
    questions are answered for every method in turn)."""
    ref = reference_method(list(per_q))
    out: dict[str, Any] = {
        "reference": ref,
        "unit": "percentage points",
        "resamples": RESAMPLES,
        "seed": SEED,
        "level": LEVEL,
        "methods": {},
    }
    if ref is None:
        return out
    for m, rows in per_q.items():
        if m == ref:
            continue
        diff: dict[str, Any] = {}
        for metric in ("em", "f1"):
            iv = paired_bootstrap(
                [100.0 * float(r[metric]) for r in per_q[ref]],
                [100.0 * float(r[metric]) for r in rows],
            )
            diff[metric] = None if iv is None else iv.as_dict(2)
        out["methods"][m] = diff
    return out


def bench_answers(
    settings: Settings,
    questions: Sequence[Question],
    retrieved: Mapping[str, Sequence[Sequence[str]]],
    docs_by_id: Mapping[str, Document],
    wanted: Sequence[str],
    budget_s: float | None,
) -> tuple[dict[str, Any], list[str]]:
    """`terag bench --answers`: the `wanted` methods' passages read by the project's reader
    (`client.answer`'s prompt through the LLM TERAG_LLM_MODEL names), so every method is read by the same reader
    with the same prompt and top-k and retrieval is not repeated. Calls are cached in TERAG_HOME:
    a rerun only pays for new calls, and `budget_s` ends a run in time with every method
    answered on the same questions. Returns the answers and notes for the bench report."""
    notes: list[str] = []
    missing = [m for m in wanted if m not in retrieved]
    if missing:
        notes.append(f"answers: methods {missing} did not run; not answered")
    llm = make_llm(settings)
    try:
        llm.check_model()
    except LLMError as e:
        llm.close()
        msg = f"answers skipped: the LLM server is unreachable or lacks the model ({e})"
        log.warning("%s", msg)
        return {"skipped": msg}, notes
    cache = AnswerCache(settings.home / ANSWER_CACHE_FILE)
    try:
        answers = answer_methods(
            CachedReader(llm, cache),
            questions,
            {m: retrieved[m] for m in wanted if m in retrieved},
            docs_by_id,
            budget_s=budget_s,
        )
    finally:
        cache.close()
        llm.close()
    for name, a in answers["methods"].items():
        log.info(
            "answers %s: EM %.3f F1 %.3f on %d questions", name, a["em"], a["f1"], a["questions"]
        )
    if not answers["complete"]:
        notes.append(
            f"answers: {answers['questions_answered']} of {answers['questions_total']} questions "
            "answered (time budget); rerun the same command to continue from the answer cache"
        )
    return answers, notes
