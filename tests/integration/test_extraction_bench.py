"""The extraction benchmark against a real Ollama (SmolLM2) and spaCy on real benchmark data."""

from __future__ import annotations

import pytest
from terag_bench import extraction_bench as eb
from terag_bench.datasets import dataset_root

from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Passage

pytestmark = [pytest.mark.integration]

DATASET = "musique_hipporag_train100"


@pytest.fixture(scope="module")
def sample() -> tuple[list[Passage], dict[str, set[str]]]:
    folder = dataset_root() / DATASET
    if not (folder / "recorded_extractions.jsonl").is_file():
        pytest.skip(f"benchmark data not found at {folder} (set TERAG_DATASETS)")
    return eb.sample_passages(folder, 20)


def test_sample_is_the_corpus_head_with_references(
    sample: tuple[list[Passage], dict[str, set[str]]],
) -> None:
    passages, reference = sample
    assert len(passages) == 20 and len({p.id for p in passages}) == 20
    assert all(reference[p.id] for p in passages)


def test_spacy_finds_most_reference_entities(
    sample: tuple[list[Passage], dict[str, set[str]]],
) -> None:
    row = eb.run_spacy(*sample)
    assert row.entity_recall > 0.5 and row.entity_precision > 0.4
    assert row.input_tokens_per_passage == 0 and row.passages_per_s > 0


@pytest.mark.ollama
@pytest.mark.parametrize("batch", [1, 2])
def test_llm_row_has_server_token_counts(
    ollama_settings: Settings,
    sample: tuple[list[Passage], dict[str, set[str]]],
    batch: int,
) -> None:
    passages, reference = sample
    row = eb.run_ollama(ollama_settings, ollama_settings.llm_model, batch, passages[:4], reference)
    assert row.passages == 4 and row.batch == batch
    assert row.passage_tokens is not None and row.passage_tokens > 20
    # The prompt holds the passage plus instructions and examples.
    assert row.input_tokens_per_passage > row.passage_tokens
    assert row.output_tokens_per_passage > 0
    assert 0.0 <= row.entity_recall <= 1.0 and 0.0 <= row.ungrounded <= 1.0
    assert 0 <= row.missing_sections <= (0 if batch == 1 else 4)
    assert row.samples and row.samples[0]["answer"]
