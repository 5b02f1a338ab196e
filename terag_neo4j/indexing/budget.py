"""Budget mode: spend LLM tokens only on the passages that matter most (KET-RAG style).

Every passage is indexed with the zero-token spaCy extractor first. Then a fraction β of the
namespace's passages, the "core", is ranked first over that cheap graph by a selection rule
computed in GDS, and only those go through the LLM extractor; their LLM concepts are merged into
the same graph (added to spaCy's, or in place of them) with the same normalisation and
deduplication.

The choice is stored on the passages (`core_selected`) before any token is paid, and a passage
whose concepts were merged is marked `core_merged`: a rerun with the same β changes nothing, an
interrupted run finishes the same choice, a larger β or new documents only add core passages,
and a changed passage is written anew without marks (the budget then picks again).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.core.concepts import TITLE, Concept, dedupe
from terag_neo4j.store import GraphStore, gds

log = logging.getLogger(__name__)

Selection = Literal["pagerank", "degree", "knn_pagerank"]
Merge = Literal["add", "replace"]
SELECTIONS: tuple[Selection, ...] = ("pagerank", "degree", "knn_pagerank")


def core_target(beta: float, passages: int) -> int:
    """How many core passages a budget β buys: ⌈β·N⌉ (so any β > 0 buys at least one)."""
    if not 0.0 <= beta <= 1.0:
        raise SettingsError(f"the LLM budget is a fraction of the passages, 0..1; got {beta}")
    # The epsilon keeps 0.1 * 1890 = 189.00000000000003 from buying 190.
    return min(passages, math.ceil(beta * passages - 1e-9))


def rank(scores: Mapping[str, float]) -> list[str]:
    """Passage ids best first; ties go to the smaller id, so a rerun ranks the same way."""
    return sorted(scores, key=lambda pid: (-scores[pid], pid))


def choose(scores: Mapping[str, float], already: Iterable[str], target: int) -> list[str]:
    """The passages to add to the core so that it holds `target`: the best-ranked ones not in it.

    A core that is already as large (a rerun, or β lowered) gets none; passages never demote.
    """
    have = set(already)
    missing = target - len(have)
    if missing <= 0:
        return []
    return [pid for pid in rank(scores) if pid not in have][:missing]


def merge_concepts(
    base: Sequence[Concept],
    llm: Sequence[Concept],
    mode: Merge,
    known: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[Concept, ...]:
    """A core passage's concepts: the LLM's, added to the cheap extractor's or in their place.

    An LLM name that the graph already has as a concept (the passage's own spaCy concepts first,
    then the namespace's most frequent one, `known`: {norm: (type, name)}) becomes that concept,
    whatever type the LLM gave it, so the core passage joins the concepts the other passages
    have instead of starting a twin under another type (recorded extractions are all `other`).
    Title concepts stay apart: they are added after the merge, to every passage alike.
    """
    own = {c.norm: c for c in base if c.type != TITLE}
    mapped: list[Concept] = []
    for c in llm:
        if c.norm in own:
            mapped.append(own[c.norm])
        elif known and c.norm in known:
            mapped.append(Concept(*known[c.norm]))
        else:
            mapped.append(c)
    if mode == "replace":
        return dedupe(mapped)
    return dedupe((*base, *mapped))


def passage_scores(
    store: GraphStore, settings: Settings, namespace: str, rule: Selection
) -> dict[str, float]:
    """Every passage's score under `rule` (see `gds.core_scores`), computed in GDS."""
    if rule not in SELECTIONS:
        raise SettingsError(f"unknown budget selection {rule!r}; choose from {list(SELECTIONS)}")
    return gds.core_scores(store, namespace, rule)
