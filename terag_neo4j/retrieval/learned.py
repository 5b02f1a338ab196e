"""The learned final ranking (`final_rank="learned"`): a small boosted model picks the first
passages from the union of the walk's, the vector ranking's and the full-text ranking's top
ones; the walk's order follows.

Why: one fixed rule cannot know when to trust which signal. Where the embedder is sure (a wide
margin between its first and second passage) and BM25 agrees, its first passage belongs first;
where the question links specific concepts and the walk's mass sits on passages neither flat
ranking saw, the walk's chain does. The model reads these per question and per passage
(`FEATURES`), every score scaled within the question's own ranking, so an embedder or an index of
another scale ranks the same way. It is a sum of one-split trees (gradient-boosted stumps): each
reads one feature against a threshold, so it can learn "the walk's first, unless ..." where a
weighted sum could not (a linear model over the same features fell 2-3 points of 2Wiki R@2 short
of the walk's order). It picks only the first `head` passages: below them the walk's order
stands, which keeps the walk's R@5 on the sets where the graph is strong (docs/benchmarks.md).

The model is data (`terag_neo4j/data/final_rank_v3.json`), trained offline by
`terag-bench final-rank-train` from the bench sets' training questions, chosen by
leave-one-corpus-out validation (docs/retrieval.md). Nothing is trained at run time; scoring is
one comparison per stump and candidate (about 30 of each, well under a millisecond).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from terag_neo4j.errors import TeragError
from terag_neo4j.retrieval.flat import anchor_node, pinned_first

MODEL_FILE = "final_rank_v3.json"
FORMAT = "terag-final-rank/2"
# Each flat channel's passages taken as candidates, and the walk's, unless the model file names
# its own (`candidates`); the walk returns the model's pool, and this many to a probe (the
# bench's training data), so a model's walk pool is at most this.
FLAT_CANDIDATES = 10
WALK_CANDIDATES = 20
# The most stumps and the most passages a model may pick (a model file is data: bounded)
MAX_STUMPS = 1000
MAX_HEAD = 20
# A channel's raw scores are scaled between its first passage and the one at this rank
# (or its last), per question: the scale of Lucene's BM25 or of an embedder's cosine drops out.
SCALE_DEPTH = 50


class ModelError(TeragError, ValueError):
    """A final-rank model file that cannot be used; the message says why."""


@dataclass
class Inputs:
    """What the final ranking sees of one question: each ranking as (node, score) best first,
    the linked concepts (node, frequency, weight) and which ranked passages name each."""

    walk: list[tuple[int, float]]
    text: list[tuple[int, float]]
    vector: list[tuple[int, float]]
    linked: list[tuple[int, int, float]] = field(default_factory=list)
    support: dict[int, list[int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "walk": self.walk,
            "text": self.text,
            "vector": self.vector,
            "linked": self.linked,
            "support": {str(k): v for k, v in self.support.items()},
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Inputs:
        return cls(
            [(int(n), float(s)) for n, s in d["walk"]],
            [(int(n), float(s)) for n, s in d["text"]],
            [(int(n), float(s)) for n, s in d["vector"]],
            [(int(n), int(f), float(w)) for n, f, w in d["linked"]],
            {int(k): [int(p) for p in v] for k, v in d["support"].items()},
        )


FEATURES = (
    # per passage: each channel's reciprocal rank and scaled score (0 where it is absent)
    "walk_rr",
    "walk_mass",
    "vec_rr",
    "vec_score",
    "text_rr",
    "text_score",
    "channels",  # share of the three channels with it among their candidates
    "anchor",  # 1 for the flat rankings' sure first passage (flat.anchor_node), the one
    # `final_rank="anchored"` pins
    "anchored_rr",  # reciprocal rank in `anchored`'s order (that passage, then the walk's)
    "linked_named",  # log(1 + linked concepts it names)
    "linked_specific",  # sum over them of 1 / passages naming the concept
    # per question
    "margin",  # the vector ranking's first minus second, in its scaled units
    "bm25_agrees",  # the full-text ranking's reciprocal rank of the vector ranking's first
    "linked",  # log(1 + linked concepts)
    "specificity",  # 1 / passages naming the most specific linked concept
    "walk_outside",  # share of the walk's candidate mass on passages neither flat ranking has
    # when to trust which signal
    "vec_rr_x_margin",
    "vec_rr_x_agrees",
    "walk_rr_x_specificity",
    "walk_rr_x_outside",
    "text_rr_x_agrees",
    "vec_rr_x_unlinked",
)


def _scaled(ranking: Sequence[tuple[int, float]]) -> dict[int, float]:
    """Scores in [0, 1] within the ranking: its first 1, its `SCALE_DEPTH`th (or last) 0."""
    if not ranking:
        return {}
    hi = ranking[0][1]
    lo = ranking[min(len(ranking), SCALE_DEPTH) - 1][1]
    if hi <= lo:
        return {n: 1.0 for n, _ in ranking}
    return {n: min(max((s - lo) / (hi - lo), 0.0), 1.0) for n, s in ranking}


def _rr(ranking: Sequence[tuple[int, float]], depth: int) -> dict[int, float]:
    return {n: 1.0 / (i + 1) for i, (n, _) in enumerate(ranking[:depth])}


def candidates(x: Inputs, walk: int = WALK_CANDIDATES, flat: int = FLAT_CANDIDATES) -> list[int]:
    """The union of the walk's top `walk` and both flat rankings' top `flat` passages, the
    walk's first."""
    out = dict.fromkeys(n for n, _ in x.walk[:walk])
    for ranking in (x.vector, x.text):
        out.update(dict.fromkeys(n for n, _ in ranking[:flat]))
    return list(out)


def features(
    x: Inputs, walk: int = WALK_CANDIDATES, flat: int = FLAT_CANDIDATES
) -> tuple[list[int], list[list[float]]]:
    """The candidates (`candidates`) and one row of `FEATURES` each."""
    nodes = candidates(x, walk, flat)
    walk_rr, vec_rr, text_rr = _rr(x.walk, walk), _rr(x.vector, flat), _rr(x.text, flat)
    top_mass = x.walk[0][1] if x.walk and x.walk[0][1] > 0 else 1.0
    mass = {n: s / top_mass for n, s in x.walk[:walk]}
    vec, text = _scaled(x.vector), _scaled(x.text)
    margin = (
        vec.get(x.vector[0][0], 0.0) - vec.get(x.vector[1][0], 0.0) if len(x.vector) > 1 else 0.0
    )
    agrees = 0.0
    if x.vector and x.text:
        first = x.vector[0][0]
        agrees = next((1.0 / (i + 1) for i, (n, _) in enumerate(x.text) if n == first), 0.0)
    freq = {c: f for c, f, w in x.linked if w > 0}
    named: dict[int, list[int]] = {}
    for c, passages in x.support.items():
        if c in freq:
            for p in passages:
                named.setdefault(p, []).append(freq[c])
    linked = math.log1p(len(freq))
    specificity = 1.0 / max(min(freq.values()), 1) if freq else 0.0
    anchor = anchor_node([n for n, _ in x.text], [n for n, _ in x.vector])
    pinned = pinned_first([n for n, _ in x.walk[:walk]], anchor)[:walk]
    anchored_rr = {n: 1.0 / (i + 1) for i, n in enumerate(pinned)}
    flat_top = set(vec_rr) | set(text_rr)
    walk_total = sum(mass.values())
    outside = (
        sum(m for n, m in mass.items() if n not in flat_top) / walk_total if walk_total > 0 else 0.0
    )
    rows = []
    for n in nodes:
        w_rr, v_rr, t_rr = walk_rr.get(n, 0.0), vec_rr.get(n, 0.0), text_rr.get(n, 0.0)
        fs = named.get(n, [])
        rows.append(
            [
                w_rr,
                mass.get(n, 0.0),
                v_rr,
                vec.get(n, 0.0),
                t_rr,
                text.get(n, 0.0),
                ((n in walk_rr) + (n in vec_rr) + (n in text_rr)) / 3.0,
                float(n == anchor),
                anchored_rr.get(n, 0.0),
                math.log1p(len(fs)),
                sum(1.0 / max(f, 1) for f in fs),
                margin,
                agrees,
                linked,
                specificity,
                outside,
                v_rr * margin,
                v_rr * agrees,
                w_rr * specificity,
                w_rr * outside,
                t_rr * agrees,
                v_rr * (linked == 0.0),
            ]
        )
    return nodes, rows


@dataclass(frozen=True)
class Stump:
    """One split: `left` where the feature is at most `threshold`, else `right`."""

    feature: int
    threshold: float
    left: float
    right: float


@dataclass(frozen=True)
class Model:
    """Boosted stumps over `FEATURES`: a candidate's score is `base` plus each stump's value,
    its probability the logistic of that; the first `head` candidates by it are picked."""

    base: float
    stumps: tuple[Stump, ...]
    version: str = ""
    walk: int = WALK_CANDIDATES  # the candidate pool: the walk's top, each flat ranking's top
    flat: int = FLAT_CANDIDATES
    head: int = 2

    def score(self, row: Sequence[float]) -> float:
        return self.base + sum(
            s.left if row[s.feature] <= s.threshold else s.right for s in self.stumps
        )

    def rank(self, x: Inputs) -> list[tuple[int, float]]:
        """The candidates best first, each with its probability; ties keep the walk's order."""
        nodes, rows = features(x, self.walk, self.flat)
        scored = [
            (n, 1.0 / (1.0 + math.exp(-self.score(r))), i)
            for i, (n, r) in enumerate(zip(nodes, rows, strict=True))
        ]
        scored.sort(key=lambda t: (-t[1], t[2]))
        return [(n, p) for n, p, _ in scored]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": self.version,
            "features": list(FEATURES),
            "base": self.base,
            "stumps": [[FEATURES[s.feature], s.threshold, s.left, s.right] for s in self.stumps],
            "candidates": {"walk": self.walk, "flat": self.flat},
            "head": self.head,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Model:
        if data.get("format") != FORMAT:
            raise ModelError(f"final-rank model format {data.get('format')!r}, expected {FORMAT!r}")
        if list(data.get("features") or []) != list(FEATURES):
            raise ModelError("final-rank model features differ from this version's: rebuild it")
        raw = data.get("stumps")
        if not isinstance(raw, list) or len(raw) > MAX_STUMPS:
            raise ModelError(f"final-rank model stumps must be a list of at most {MAX_STUMPS}")
        try:
            base = float(data["base"])
            stumps = tuple(
                Stump(FEATURES.index(f), float(t), float(lo), float(hi)) for f, t, lo, hi in raw
            )
        except (KeyError, TypeError, ValueError):
            raise ModelError(
                "final-rank model stumps are not [feature, threshold, left, right] with a known "
                "feature and numbers, or its base is missing"
            ) from None
        numbers = [base, *(v for s in stumps for v in (s.threshold, s.left, s.right))]
        if not all(math.isfinite(v) for v in numbers):
            raise ModelError("final-rank model numbers must be finite")
        pool = data.get("candidates") or {}
        walk, flat = pool.get("walk", WALK_CANDIDATES), pool.get("flat", FLAT_CANDIDATES)
        head = data.get("head", 2)
        bounds = ((walk, WALK_CANDIDATES), (flat, 50), (head, MAX_HEAD))
        if not all(isinstance(v, int) and 1 <= v <= cap for v, cap in bounds):
            raise ModelError(
                f"final-rank model candidates must be 1-{WALK_CANDIDATES} walk and 1-50 flat "
                f"passages, and it picks 1-{MAX_HEAD} (head)"
            )
        return cls(base, stumps, str(data.get("version", "")), walk, flat, head)


@cache
def shipped() -> Model:
    """The packaged model (`terag_neo4j/data/final_rank_v3.json`), read once."""
    text = resources.files("terag_neo4j").joinpath("data", MODEL_FILE).read_text(encoding="utf-8")
    return Model.from_json(json.loads(text))
