"""Unit tests of the extraction benchmark's scoring and its result files (no services)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from terag_bench import extraction_bench as eb

from terag_neo4j.core.concepts import Concept
from terag_neo4j.core.documents import Passage

P1 = Passage("p1", "p1", 0, "Radio City", "Radio City is India's first private FM radio station.")
P2 = Passage("p2", "p2", 0, "Marie Curie", "Marie Curie won the Nobel Prize in 1903.")
REFERENCE = {"p1": {"radio city", "india"}, "p2": {"marie curie", "nobel prize", "1903"}}


def test_score_counts_grounded_entities_against_the_reference() -> None:
    raw = [
        # "India's" normalises to "india s": the reference's "india" is not matched by it.
        (Concept("organization", "Radio City"), Concept("location", "Detroit"),
         Concept("concept", "FM radio station")),
        (Concept("person", "Marie Curie"), Concept("date", "1903"), Concept("concept", "Nobel Prize")),
    ]  # fmt: skip
    s = eb.score([P1, P2], raw, REFERENCE)
    # Entities kept after grounding: Radio City, Marie Curie, 1903 (Detroit is not in the text).
    assert s.entity_recall == pytest.approx(3 / 5)
    assert s.entity_precision == pytest.approx(3 / 3)
    assert s.recall_all == pytest.approx(4 / 5)  # the concept "Nobel Prize" is a reference name
    assert s.ungrounded == pytest.approx(1 / 6)
    assert s.concepts_per_passage == pytest.approx(5 / 2)
    assert s.entities_per_passage == pytest.approx(3 / 2)


def test_score_of_nothing_is_zero_not_an_error() -> None:
    s = eb.score([P1], [()], {})
    assert (s.entity_recall, s.entity_precision, s.ungrounded) == (0.0, 0.0, 0.0)


def row(model: str, batch: int, recall: float) -> eb.Row:
    return eb.Row(
        "ollama", model, batch, 10, recall, 0.5, recall, 4.0, 3.0, 0.1, 300.0, 40.0, 150.0, 0.5
    )


def test_write_replaces_the_same_row_and_keeps_the_others(tmp_path: Path) -> None:
    eb.write([row("a", 1, 0.1), row("a", 4, 0.2)], tmp_path, "ds", {"num_thread": 1})
    eb.write([row("a", 4, 0.3)], tmp_path, "ds", {"num_thread": 1})
    data = json.loads((tmp_path / "extraction_ds.json").read_text())
    assert [(r["batch"], r["entity_recall"]) for r in data["rows"]] == [(1, 0.1), (4, 0.3)]
    table = (tmp_path / "extraction_ds.md").read_text().splitlines()
    assert table[0] == eb.HEADER and len(table) == 4
    assert "| a | v2 | 4 | 10 | 30.0% | 50.0% |" in table[3] and "| 2.00 |" in table[3]


def test_input_ratio_needs_passage_tokens() -> None:
    assert row("a", 1, 0.1).input_ratio == pytest.approx(2.0)
    assert replace(row("a", 1, 0.1), passage_tokens=None).input_ratio is None
