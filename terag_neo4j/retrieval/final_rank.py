"""The final ranking of the walk's passages, by `final_rank`: `learned` (the default) lets the
packaged model pick the first passages (`learned.py`, `learned_order`), the walk's order below
them; `anchored` keeps the walk's order with the one passage the flat ranking is sure of first;
`walk` keeps the walk's order as it is. The anchored rule is also one of the model's features.

Why the anchored rule (measured offline on every bench set, then in `terag bench`; docs/benchmarks.md):

- Fusing the walk's whole list with the flat rankings, by reciprocal rank or percentile rank at
  any weight from 0.5 to 0.75, cost 2Wiki 5 to 10 points of R@2 and R@5 and MuSiQue up to 8:
  the passages the walk adds are those the flat rankings rank low, and any share given to the
  flat ranks pushes them out again.
- What the walk gets wrong is narrower: where the embedder alone is strong (HotpotQA) it moves
  the passage the vector ranking puts first out of the top 2. That passage is pinned first when
  the full-text ranking does not contradict it, i.e. the two channels fused by reciprocal rank
  also have it in their top `ANCHOR_WITHIN`; every other passage keeps the walk's order, so a
  chain the graph found moves down one place at most. Against the walk alone this won 20 and
  lost 10 questions at R@2 over the seven sets, and changed no R@5 on the Wikipedia sets.
  Pinning the vector's first unconditionally churned more (30 won, 28 lost); pinning the fused
  flat ranking's first brought BM25's misses along (no gain on HotpotQA); pinning two passages
  cost 2Wiki 12 points of R@2.
- Answering a question that links no concept with the flat ranking instead of the walk from it
  was a wash (novel +1 question in 728, medical -1 in 898, MuSiQue -1 in 100): not done.

Zero LLM tokens; a read of the pinned passage only where the walk did not return it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from terag_neo4j import tracing
from terag_neo4j.core.results import RetrievedPassage
from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.retrieval import learned
from terag_neo4j.retrieval.flat import FlatRanking, anchor_node
from terag_neo4j.retrieval.learned import Inputs
from terag_neo4j.store import GraphStore


def pin(
    walked: Sequence[RetrievedPassage], anchor: RetrievedPassage | None, k: int
) -> list[RetrievedPassage]:
    """`anchor` first, then the walk's passages in their order, `k` in all. Scores stay the
    walk's mass, except that the anchor takes at least the first one's, so they still fall down
    the list."""
    if anchor is None:
        return list(walked[:k])
    own = next((p for p in walked if p.id == anchor.id), None)
    top = max([p.score for p in walked[:1]] + [own.score if own else 0.0])
    first = replace(own or anchor, score=top)
    return [first, *(p for p in walked if p.id != anchor.id)][:k]


def anchored(
    store: GraphStore, flat: FlatRanking, walked: Sequence[RetrievedPassage], k: int
) -> list[RetrievedPassage]:
    """The walk's top `k` with the flat ranking's sure first passage pinned (`anchor_node`)."""
    node = anchor_node(flat.text_order, flat.vector_order)
    if node is None:
        return list(walked[:k])
    # Usually the walk returned the anchor too: then its passage is at hand, no read needed.
    own = next((p for p in walked if p.id == flat.vector_first), None)
    if own is not None:
        return pin(walked, own, k)
    rows = store.read("passages_by_node", nodes=[node])
    anchor = RetrievedPassage.from_row({**rows[0], "score": 0.0}) if rows else None
    return pin(walked, anchor, k)


def learned_order(
    store: GraphStore, inputs: Inputs, walk: Sequence[RetrievedPassage], k: int
) -> list[RetrievedPassage]:
    """The shipped model's first `head` picks of the candidates (`learned.py`), each scored by
    its probability, then the walk's passages in their order; without a vector ranking, the
    walk's order alone. Picks the walk did not return are read by node."""
    if not inputs.vector:
        # No training question lacked a vector ranking, so the model has not learned what its
        # absence means; the walk's order stands, as `anchored` leaves it without one.
        return list(walk[:k])
    model = learned.shipped()
    by_node = {n: p for (n, _), p in zip(inputs.walk, walk, strict=False)}
    picked = model.rank(inputs)[: min(model.head, k)]
    missing = [n for n, _ in picked if n not in by_node]
    if missing:
        for r in store.read("passages_by_node", nodes=missing):
            by_node[int(r["node"])] = RetrievedPassage.from_row({**r, "score": 0.0})
    out = [replace(by_node[n], score=p) for n, p in picked if n in by_node]
    chosen = {p.id for p in out}
    floor = out[-1].score if out else 1.0
    rest = [p for p in walk if p.id not in chosen][: k - len(out)]
    # the walk's mass below the picks' probabilities, so scores still fall down the list
    return out + [replace(p, score=min(p.score, floor)) for p in rest]


def finish(
    store: GraphStore,
    rc: RetrievalConfig,
    mode: str,
    flat: FlatRanking | None,
    walked: Sequence[RetrievedPassage],
    k: int,
    timings: dict[str, float],
    inputs: Inputs | None = None,
) -> list[RetrievedPassage]:
    """The retrieval's passages from the walk's, for the `pagerank` mode: anchored (`anchored`)
    under `final_rank="anchored"`, the model's (`learned_order`) under `"learned"`, the stage's
    time in `timings["final"]`; else the walk's top `k`."""
    if mode != "pagerank" or flat is None or rc.final_rank == "walk":
        return list(walked[:k])
    with tracing.stage("final", timings):
        if rc.final_rank == "learned" and inputs is not None:
            return learned_order(store, inputs, walked, k)
        return anchored(store, flat, walked, k)
