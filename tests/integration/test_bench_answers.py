"""`terag bench --answers`: the reader on a real Ollama (the small SmolLM2 model), cached on disk.

Only BM25 and dense retrieve here (no graph, so no Neo4j): the point is the reader path, that
every method is answered on the same questions with the same prompt, and that a rerun makes no
call at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from terag_bench.bench import BenchConfig, run_bench
from terag_bench.datasets import dataset_root, load_dataset

from terag_neo4j.config import Settings
from terag_neo4j.retrieval.retriever import READER_MAX_TOKENS

pytestmark = [pytest.mark.integration, pytest.mark.ollama]

DATASET = "hotpotqa_hipporag_train100"


def test_reader_answers_every_method_and_a_rerun_is_free(
    ollama_settings: Settings, tmp_path: Path
) -> None:
    folder = dataset_root() / DATASET
    if not (folder / "corpus.jsonl").is_file():
        pytest.skip(f"benchmark data not found at {folder} (set TERAG_DATASETS)")
    dataset = load_dataset(folder, limit=2, max_passages=20)
    settings = ollama_settings.model_copy(update={"home": tmp_path})
    config = BenchConfig(
        extractors=[],
        methods=["bm25", "dense"],
        answers=True,
        answer_methods=["bm25", "dense"],
        progress=False,
    )
    first = run_bench(settings, dataset, config)["answers"]
    assert first["questions_answered"] == 2 and first["complete"]
    assert (first["calls_fresh"], first["calls_cached"]) == (4, 0)
    for name in ("bm25", "dense"):
        a = first["methods"][name]
        assert [q["id"] for q in a["per_question"]] == [q.id for q in dataset.questions]
        assert 0.0 <= a["em"] <= a["f1"] <= 1.0
        assert a["tokens"]["input_per_query"] > 50  # the passages reached the reader
        assert all(0 < q["tokens"][1] <= READER_MAX_TOKENS for q in a["per_question"])
    assert (tmp_path / "answers.sqlite3").is_file()

    again = run_bench(settings, dataset, config)["answers"]
    assert (again["calls_fresh"], again["calls_cached"]) == (0, 4)
    for name in ("bm25", "dense"):
        before = [q["prediction"] for q in first["methods"][name]["per_question"]]
        assert [q["prediction"] for q in again["methods"][name]["per_question"]] == before
