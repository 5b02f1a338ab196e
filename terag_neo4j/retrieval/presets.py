"""Retrieval knobs: one typed object, `RetrievalConfig`, and the named presets built from it.

A user picks a preset (`TERAG_PRESET`); the knobs are for experiments and the benchmarks
(`terag bench`, `terag bench-latency --set damping=0.3`), overridable one by one with
`TERAG_RETRIEVAL='{"damping": 0.3}'` or `TeragClient(retrieval={"damping": 0.3})`. The rule is
the same however they arrive: the preset's values first, then the knobs given explicitly.
docs/configuration.md documents every knob.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from terag_neo4j.errors import TeragError


class RetrievalConfig(BaseModel):
    """How a question becomes a ranked list of passages."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # --- linking: how a question finds its concepts
    # `names` looks the question's word n-grams up among the namespace's concept names (exact,
    # then inflection-insensitive; zero tokens, no NER); `ner` runs query NER first (the paper);
    # `none` links nothing (the walk spreads the flat ranking alone: an ablation).
    linking: Literal["names", "ner", "none"] = "names"
    semantic_top_n: int = Field(default=3, ge=0)  # ner: concepts per unmatched entity by cosine
    similarity_mode: Literal["entity", "query"] = "entity"  # ner: compare the entity or question

    # --- restart vector over concepts
    # `verified`: a linked concept weighs f^-specificity_power times its best passage's flat
    # relevance^verify_power, unnormalised, so a specific link that the question's text agrees
    # with steers the walk and a generic or unsupported one hardly counts. The paper's: s/f
    # normalised (`s_over_f`), or without similarity (`inv_f`), or without specificity (`uniform`).
    weighting: Literal["verified", "s_over_f", "inv_f", "uniform"] = "verified"
    specificity_power: float = Field(default=2.0, ge=0)
    verify_power: float = Field(default=2.0, ge=0)
    # s_over_f and friends: exact and semantic matches normalised together, or per group
    restart_split: Literal["pooled", "group"] = "pooled"

    # --- restart vector over passages: the flat rankings the walk starts from
    # `fused`: the full-text (Lucene BM25) and vector rankings' top `flat_top`, each min-max
    # scaled, averaged (`dense_share`: the vector ranking's weight); `dense`: cosine only
    # (HippoRAG 2's passage nodes); `none`: concepts only.
    seeds: Literal["fused", "dense", "none"] = "fused"
    flat_top: int = Field(default=200, ge=1)
    dense_share: float = Field(default=0.5, ge=0, le=1)  # the vector ranking's part of the two
    # each ranking's scores to [0, 1]: over its own min and max, or its mean +- 3 sd
    flat_scaling: Literal["minmax", "zscore"] = "minmax"
    seed_top: int = Field(default=200, ge=0)  # passages seeded; 0 = every passage (dense only)
    seed_weight: float = Field(default=0.05, ge=0)  # their mass; each concept weighs up to 1
    seed_power: float = Field(default=4.0, gt=0)  # sharpens the scaled relevance

    # --- the walk
    # `global`: the namespace's projection, cached per version; `local`: a projection of the
    # question's neighbourhood (seeds, linked concepts, their concepts and those concepts'
    # passages), built per query, so its cost does not grow with the corpus; `auto`: local for
    # namespaces of more than `local_above` passages.
    walk: Literal["auto", "global", "local"] = "auto"
    local_above: int = Field(default=20_000, ge=0)
    # A local walk's graph grows from the linked concepts and the `local_seeds` best-weighted
    # passage seeds (0 = every seed); the other seeds are restart nodes without edges. The
    # seeds make most of that graph (on 2Wiki 9k of its relationships at p50, 185 without them)
    # while their weights fall as the fourth power of their scaled relevance.
    local_seeds: int = Field(default=50, ge=0)
    # Concepts named by more than this many passages do not carry the walk (0 = all do): mass
    # through such a hub lands nowhere in particular, and the cap bounds the local subgraph.
    hub_cap: int = Field(default=20, ge=0)
    damping: float = Field(default=0.5, ge=0, lt=1)
    max_iterations: int = Field(default=100, ge=1)
    # Where the walk stops: the top 5 it returns equal the exact (converged) PageRank's for
    # 238 of 300 2Wiki questions at 1e-5, 288 at 1e-6, all 300 at 1e-7 (`terag bench-latency`);
    # each tenfold costs about 20% of a query's time. Short of convergence the order of
    # near-equal passages is noise, not evidence.
    tolerance: float = Field(default=1e-6, gt=0)
    # Threads per PageRank call. Two keep a single query as fast at tolerance 1e-6 as one
    # thread was at 1e-4 (2Wiki p50 74.8 vs 73.0 ms); with four clients the machine is busy
    # either way (19.1 vs 19.8 q/s on 2 cores). A local projection reads on one thread.
    gds_concurrency: int = Field(default=2, ge=1)
    orientation: Literal["directed", "undirected"] = "undirected"
    walk_cooccurrence: bool = False
    walk_synonyms: bool = False
    # Each passage also linked to the next one of its document: in long documents (books,
    # guidelines) what connects passages is often their order, not a shared rare name.
    walk_adjacent: bool = False
    walk_titles: bool = True
    walk_noun_chunks: bool = True
    # Reciprocal-rank fusion of the walk with the vector ranking
    hybrid: bool = False

    # --- the final ranking (`final_rank.py`): `anchored` keeps the walk's order but pins the
    # vector ranking's first passage first where BM25 does not contradict it; `walk`: the
    # walk's order as it is (the paper's).
    final_rank: Literal["anchored", "walk"] = "anchored"

    def describe(self) -> dict[str, Any]:
        return self.model_dump()


# The TERAG paper's retrieval (§4.3): query NER, exact then top-3 semantic matching, s/f per
# match group, a directed walk over CO_OCCURRENCE at 0.85, no titles, no passage seeds.
PAPER: dict[str, Any] = {
    "linking": "ner",
    "semantic_top_n": 3,
    "weighting": "s_over_f",
    "restart_split": "group",
    "seeds": "none",
    "walk": "global",
    "hub_cap": 0,
    "damping": 0.85,
    "tolerance": 1e-6,
    "orientation": "directed",
    "walk_cooccurrence": True,
    "walk_titles": False,
    "final_rank": "walk",
}
PRESETS: dict[str, dict[str, Any]] = {"default": {}, "paper": PAPER}
PresetName = Literal["default", "paper"]
KNOBS = tuple(RetrievalConfig.model_fields)


class KnobError(TeragError, ValueError):
    """A retrieval knob that does not exist or has a value it cannot take."""


def resolve(preset: str, overrides: dict[str, Any] | None = None) -> RetrievalConfig:
    """The preset's knobs, then `overrides` on top: the one rule for every way knobs arrive."""
    if preset not in PRESETS:
        raise KnobError(f"unknown preset {preset!r}: choose one of {', '.join(PRESETS)}")
    given = dict(overrides or {})
    unknown = sorted(set(given) - set(KNOBS))
    if unknown:
        raise KnobError(
            f"unknown retrieval knob{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}: "
            f"known are {', '.join(KNOBS)}"
        )
    try:
        return RetrievalConfig(**{**PRESETS[preset], **given})
    except ValidationError as e:
        parts = [
            f"{'.'.join(map(str, err['loc']))}={err.get('input')!r}: {err['msg']}"
            for err in e.errors()
        ]
        raise KnobError("invalid retrieval knob: " + "; ".join(parts)) from e
