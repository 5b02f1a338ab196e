"""Retrieval knobs: one typed object, `RetrievalConfig`, and the named recipes built from it.

A user picks a recipe by name (`TERAG_PRESET`: `default` or `paper`); the knobs are for the
benchmarks and experiments, overridable one by one with `TERAG_RETRIEVAL='{"damping": 0.3}'` or
`TeragClient(retrieval={"damping": 0.3})`. The rule is the same however they arrive: the recipe's
values first, then the knobs given explicitly. docs/configuration.md documents every knob.
This module is part of the foundation: `config` validates preset names against it.
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
    # then inflection-insensitive; zero tokens, no NER); `ner` runs query NER first (the paper).
    linking: Literal["names", "ner"] = "names"
    semantic_top_n: int = Field(default=3, ge=0)  # ner: concepts per unmatched entity by cosine

    # --- restart vector over concepts
    # `verified`: a linked concept weighs f^-specificity_power times its best passage's flat
    # relevance^verify_power, unnormalised, so a specific link that the question's text agrees
    # with steers the walk and a generic or unsupported one hardly counts. `s_over_f`: the
    # paper's s/f, normalised within the exact and the semantic match group.
    weighting: Literal["verified", "s_over_f"] = "verified"
    specificity_power: float = Field(default=2.0, ge=0)
    verify_power: float = Field(default=2.0, ge=0)

    # --- restart vector over passages: the flat rankings the walk starts from
    # `fused`: the full-text (Lucene BM25) and vector rankings' top `flat_top`, each min-max
    # scaled, averaged (`dense_share`: the vector ranking's weight); `none`: concepts only.
    seeds: Literal["fused", "none"] = "fused"
    flat_top: int = Field(default=200, ge=1)
    dense_share: float = Field(default=0.5, ge=0, le=1)  # the vector ranking's part of the two
    seed_top: int = Field(default=200, ge=0)  # passages seeded
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
    # passage seeds (0 = every seed); the other seeds are restart nodes without edges: the
    # seeds make most of that graph while their weights fall as the fourth power of their
    # scaled relevance (docs/retrieval.md).
    local_seeds: int = Field(default=50, ge=0)
    # Concepts named by more than this many passages do not carry the walk (0 = all do): mass
    # through such a hub lands nowhere in particular, and the cap bounds the local subgraph.
    hub_cap: int = Field(default=20, ge=0)
    damping: float = Field(default=0.5, ge=0, lt=1)
    max_iterations: int = Field(default=100, ge=1)
    # Where the walk stops; short of convergence the order of near-equal passages is noise,
    # not evidence (how the top 5 follow the tolerance: docs/retrieval.md).
    tolerance: float = Field(default=1e-6, gt=0)
    # Threads per PageRank call (measured: docs/retrieval.md). A local projection reads on one
    # thread.
    gds_concurrency: int = Field(default=1, ge=1)
    orientation: Literal["directed", "undirected"] = "undirected"
    walk_cooccurrence: bool = False
    walk_titles: bool = True

    # --- the final ranking (`final_rank.py`): `learned`: a small packaged model picks the first
    # passages from the walk's and both flat rankings' top ones, the walk's order below them
    # (`learned.py`); `anchored` keeps the walk's order but pins the vector ranking's first
    # passage first where BM25 does not contradict it; `walk`: the walk's order as it is (the
    # paper's).
    final_rank: Literal["anchored", "learned", "walk"] = "learned"

    def describe(self) -> dict[str, Any]:
        return self.model_dump()


# The product's retrieval: every knob at its default.
DEFAULT = RetrievalConfig()
# The TERAG paper's retrieval (section 4.3): query NER, exact then top-3 semantic matching, s/f
# per match group, a directed walk over CO_OCCURRENCE at 0.85, no titles, no passage seeds.
PAPER = RetrievalConfig(
    linking="ner",
    semantic_top_n=3,
    weighting="s_over_f",
    seeds="none",
    walk="global",
    hub_cap=0,
    damping=0.85,
    tolerance=1e-6,
    orientation="directed",
    walk_cooccurrence=True,
    walk_titles=False,
    final_rank="walk",
    gds_concurrency=2,
)
RECIPES: dict[str, RetrievalConfig] = {"default": DEFAULT, "paper": PAPER}
PresetName = Literal["default", "paper"]
KNOBS = tuple(RetrievalConfig.model_fields)


class KnobError(TeragError, ValueError):
    """A retrieval knob that does not exist or has a value it cannot take."""


def resolve(preset: str, overrides: dict[str, Any] | None = None) -> RetrievalConfig:
    """The recipe's knobs, then `overrides` on top: the one rule for every way knobs arrive."""
    if preset not in RECIPES:
        raise KnobError(f"unknown preset {preset!r}: choose one of {', '.join(RECIPES)}")
    given = dict(overrides or {})
    unknown = sorted(set(given) - set(KNOBS))
    if unknown:
        raise KnobError(
            f"unknown retrieval knob{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}: "
            f"known are {', '.join(KNOBS)}"
        )
    try:
        return RetrievalConfig(**{**RECIPES[preset].model_dump(), **given})
    except ValidationError as e:
        parts = [
            f"{'.'.join(map(str, err['loc']))}={err.get('input')!r}: {err['msg']}"
            for err in e.errors()
        ]
        raise KnobError("invalid retrieval knob: " + "; ".join(parts)) from e
