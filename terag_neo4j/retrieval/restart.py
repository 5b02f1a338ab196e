"""The restart vector: how much of the walk starts at each linked concept and seeded passage.

Default (`verified`): a concept linked by the question weighs f^-a * r^b, unnormalised, where f
is how many passages name it and r the flat relevance of the best of them (`flat.py`). A name
that few passages carry and that the question's text agrees with steers the walk; a generic
one, or one whose passages the question's words do not support ("risk", a stray "BCC"), hardly
counts. The passages weigh their relevance^power, together `seed_weight`: so when no link is
trusted the walk spreads the best flat ranking over its neighbourhood and ranks close to it.

The TERAG paper's weights (eqs. 3-5) stay selectable: w(u) = s(u)/f(u) with s = 1 for an exact
match and the cosine for a semantic one, normalised within the exact and the semantic group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from terag_neo4j.core.results import MatchedConcept
from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.retrieval.flat import FlatRanking


def paper_weights(matches: Sequence[MatchedConcept]) -> list[MatchedConcept]:
    """Eqs. 3-5: w(u) = s(u)/f(u). A concept matched by several entities keeps its strongest match.

    The exact and the semantic matches are normalised separately (the paper: each group gets
    half the mass when both exist).
    """
    best = strongest(matches)
    out: list[MatchedConcept] = []
    for group in ([m for m in best if m.match == kind] for kind in ("exact", "semantic")):
        raw = [_raw_weight(m) for m in group]
        total = sum(raw)
        for m, w in zip(group, raw, strict=True):
            out.append(replace(m, weight=w / total if total > 0 else 0.0))
    return [m for m in out if m.weight > 0]


def strongest(matches: Sequence[MatchedConcept]) -> list[MatchedConcept]:
    best: dict[str, MatchedConcept] = {}
    for m in matches:
        cur = best.get(m.uid)
        if cur is None or (m.match == "exact", m.similarity) > (
            cur.match == "exact",
            cur.similarity,
        ):
            best[m.uid] = m
    return list(best.values())


def _raw_weight(m: MatchedConcept) -> float:
    s = 1.0 if m.match == "exact" else max(m.similarity, 0.0)
    return s / max(m.frequency, 1)


def verified_weights(
    matches: Sequence[MatchedConcept],
    support: dict[int, list[int]],
    flat: FlatRanking,
    rc: RetrievalConfig,
) -> list[MatchedConcept]:
    """f^-a * r^b for each concept (`support`: its passages among the flat ranking's)."""
    out = []
    for m in strongest(matches):
        r = max((flat.relevance.get(p, 0.0) for p in support.get(m.node, ())), default=0.0)
        w = max(m.frequency, 1) ** -rc.specificity_power * r**rc.verify_power
        if w > 0:
            out.append(replace(m, weight=w, support=r))
    return out


def passage_seeds(flat: FlatRanking, rc: RetrievalConfig) -> list[list[float]]:
    """[[node id, weight]] of the `seed_top` most relevant passages: relevance^power, together
    `seed_weight`."""
    top = [(n, r**rc.seed_power) for n, r in flat.top(rc.seed_top) if r > 0]
    total = sum(w for _, w in top)
    if total <= 0 or rc.seed_weight <= 0:
        return []
    return [[n, rc.seed_weight * w / total] for n, w in top]
