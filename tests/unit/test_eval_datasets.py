"""Dataset folders: loading, validation, the test-only corpus cut, namespace names."""

import json
from pathlib import Path

import pytest
from terag_bench.datasets import DatasetError, load_dataset, namespace_for, resolve_dataset


def _write(folder: Path, corpus: list[dict[str, str]], questions: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in corpus) + "\n")
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in questions) + "\n")
    return folder


CORPUS = [{"id": f"p{i}", "title": f"T{i}", "text": f"text {i}"} for i in range(10)]
QUESTIONS: list[dict[str, object]] = [
    {"id": "q1", "question": "a?", "answers": ["x"], "gold_titles": ["T8"], "gold_ids": ["p8"]},
    {"id": "q2", "question": "b?", "answers": ["y"], "gold_titles": [], "gold_ids": ["p9", "p1"]},
]


def test_loads_passages_and_questions(tmp_path: Path) -> None:
    ds = load_dataset(_write(tmp_path / "toy", CORPUS, QUESTIONS))
    assert ds.name == "toy" and len(ds.documents) == 10 and not ds.subset
    assert all(d.is_passage for d in ds.documents)
    assert ds.documents[3].title == "T3" and ds.documents[3].id == "p3"
    assert ds.questions[1].gold_ids == ("p9", "p1")
    assert ds.recorded_extractions is None


def test_limit_and_max_passages_keep_gold(tmp_path: Path) -> None:
    ds = load_dataset(_write(tmp_path / "toy", CORPUS, QUESTIONS), limit=1, max_passages=3)
    assert [q.id for q in ds.questions] == ["q1"]
    assert ds.subset
    assert ds.passage_ids == ["p0", "p1", "p8"]  # gold p8 kept, corpus order fills the rest


def test_missing_gold_passage_is_an_error(tmp_path: Path) -> None:
    bad: list[dict[str, object]] = [{"id": "q", "question": "?", "gold_ids": ["nope"]}]
    with pytest.raises(DatasetError, match="not in the corpus"):
        load_dataset(_write(tmp_path / "bad", CORPUS, bad))


def test_duplicate_passage_ids_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="duplicate"):
        load_dataset(_write(tmp_path / "dup", [*CORPUS, CORPUS[0]], QUESTIONS))


def test_resolve_by_name_under_the_dataset_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "toy", CORPUS, QUESTIONS)
    monkeypatch.setenv("TERAG_DATASETS", str(tmp_path))
    assert resolve_dataset("toy") == tmp_path / "toy"
    with pytest.raises(DatasetError, match="TERAG_DATASETS"):
        resolve_dataset("absent")


def test_namespace_names_are_valid_and_distinguish_subsets(tmp_path: Path) -> None:
    full = load_dataset(_write(tmp_path / "my.data", CORPUS, QUESTIONS))
    cut = load_dataset(tmp_path / "my.data", max_passages=4)
    assert namespace_for(full, "spacy") == "bench_my_data_spacy"
    assert namespace_for(cut, "spacy").startswith("bench_my_data_spacy_s")
    assert namespace_for(cut, "spacy") != namespace_for(full, "spacy")
    long = namespace_for(full, "recorded", prefix="x" * 60)
    assert len(long) <= 64
