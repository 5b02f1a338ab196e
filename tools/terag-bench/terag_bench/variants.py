"""The rows `terag bench` measures: the flat baselines, the default, the TERAG paper's retrieval,
and one lever of the default changed at a time (the ablations).

Every TERAG row pins every retrieval knob (`RetrievalConfig`), so the environment
(`TERAG_RETRIEVAL=...`) cannot silently change what a row measures. Rows marked as index
variants need a graph built differently, in a namespace of their own.
"""

from __future__ import annotations

from typing import Any

from terag_neo4j.core.results import Mode
from terag_neo4j.recipes import PAPER, RetrievalConfig

BASELINES = ("bm25", "dense")
DEFAULT_KNOBS: dict[str, Any] = RetrievalConfig().model_dump()
PAPER_KNOBS: dict[str, Any] = PAPER.model_dump()
# The default first, the paper's configuration, then one lever of the default at a time.
TERAG_VARIANTS: dict[str, dict[str, Any]] = {
    "terag": {},
    "paper": PAPER.model_dump(exclude_unset=True),
    # no graph: BM25 and dense fused by reciprocal rank (the product's `flat` mode), the
    # baseline a user has without a graph; and the walk's own seeds without the walk (the two
    # rankings min-max scaled and averaged)
    "flat": {},
    "flat_fused": {"damping": 0.0, "final_rank": "walk"},
    # the final ranking: the walk's order as it is (the default before `final_rank.py`)
    "walk_order": {"final_rank": "walk"},
    # the final ranking by the hand-set rule the packaged model replaced (`final_rank.anchored`)
    "anchored": {"final_rank": "anchored"},
    # linking: query NER
    "ner_linking": {"linking": "ner"},
    # restart vector: the paper's s/f weights instead of verified ones
    "unverified": {"weighting": "s_over_f"},
    "no_specificity": {"specificity_power": 0.0},
    # passage seeds: none
    "no_passage_seeds": {"seeds": "none"},
    "seed_weight_0.2": {"seed_weight": 0.2},
    "dense_share_0.7": {"dense_share": 0.7},
    "dense_share_0.85": {"dense_share": 0.85},
    "dense_share_0.3": {"dense_share": 0.3},
    # the walk: forced global or local, no hub cap, damping, direction, what it sees
    "walk_global": {"walk": "global"},
    "walk_local": {"walk": "local"},
    "no_hub_cap": {"hub_cap": 0},
    "damping_0.85": {"damping": 0.85},
    "directed": {"orientation": "directed"},
    "no_titles": {"walk_titles": False},
    "cooccurrence": {"walk_cooccurrence": True, "walk": "global"},
    # the walk fused with the vector ranking (the product's `hybrid` mode)
    "hybrid": {},
}
# Rows ranked by another mode than the walk (`Retriever.retrieve(mode=...)`).
MODES: dict[str, Mode] = {"flat": "flat", "hybrid": "hybrid"}
# Index variants: a second namespace built with these settings, read with the default knobs.
INDEX_VARIANTS: dict[str, dict[str, Any]] = {
    "no_mentions": {"ground_mentions": False},
}
METHOD_CHOICES = (*BASELINES, *TERAG_VARIANTS, *INDEX_VARIANTS)
DEFAULT_METHODS = METHOD_CHOICES


def knobs(variant: str) -> dict[str, Any]:
    """Every retrieval knob of a TERAG row."""
    if variant in INDEX_VARIANTS:
        return dict(DEFAULT_KNOBS)
    return {**DEFAULT_KNOBS, **TERAG_VARIANTS[variant]}
