"""Baselines, the bench result layout and its writers (JSON, Markdown, PNG), with no server.

A bench limited to the BM25 and dense baselines needs no Neo4j, so it runs here on a toy corpus.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from terag_bench.baselines import BM25Baseline
from terag_bench.bench import BenchConfig, run_bench
from terag_bench.datasets import load_dataset
from terag_bench.outputs import (
    RECALL_PNG,
    SUMMARY_MD,
    TOKENS_PNG,
    load_results,
    markdown_report,
    recall_table,
    write_json,
    write_summary,
)

from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document

CORPUS = [
    {"id": "berlin", "title": "Berlin", "text": "Berlin is the capital of Germany."},
    {"id": "paris", "title": "Paris", "text": "Paris is the capital and largest city of France."},
    {"id": "seine", "title": "Seine", "text": "The Seine is a river that flows through Paris."},
    {"id": "rhine", "title": "Rhine", "text": "The Rhine flows from Switzerland to the North Sea."},
    {"id": "cat", "title": "Cat", "text": "The cat is a small domesticated carnivorous mammal."},
]
QUESTIONS = [
    {
        "id": "q1",
        "question": "Which river flows through the capital of France?",
        "answers": ["Seine"],
        "gold_ids": ["paris", "seine"],
    },
    {
        "id": "q2",
        "question": "What is the capital of Germany?",
        "answers": ["Berlin"],
        "gold_ids": ["berlin"],
    },
    {
        "id": "q3",
        "question": "Where does the Rhine end?",
        "answers": ["North Sea"],
        "gold_ids": ["rhine"],
    },
]


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    folder = tmp_path / "toyqa"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in CORPUS) + "\n")
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in QUESTIONS) + "\n")
    return folder


def test_bm25_ranks_the_matching_passage_first() -> None:
    docs = [Document(r["id"], r["text"], r["title"], is_passage=True) for r in CORPUS]
    bm25 = BM25Baseline(docs)
    assert bm25.retrieve("capital of Germany", 2)[0] == "berlin"
    assert bm25.retrieve("the of a", 5) == []  # stopwords only: nothing scores


def _bench(toy: Path, tmp_path: Path, methods: list[str]) -> dict[str, Any]:
    settings = Settings(home=tmp_path / "home")
    return run_bench(settings, load_dataset(toy), BenchConfig(extractors=[], methods=methods))


def test_baseline_bench_result_has_every_number(toy: Path, tmp_path: Path) -> None:
    result = _bench(toy, tmp_path, ["bm25", "dense"])
    assert result["dataset"] == {
        "name": "toyqa",
        "path": str(toy),
        "kind": "recall",
        "passages": 5,
        "questions": 3,
        "subset": False,
    }
    assert set(result["methods"]) == {"bm25", "dense"}
    for m in result["methods"].values():
        assert set(m["recall"]) == {"2", "5"}
        assert 0.0 <= m["recall"]["2"] <= m["recall"]["5"] <= 1.0
        assert m["latency_ms"]["p50"] <= m["latency_ms"]["p95"]
        assert len(m["per_question"]) == 3
        assert m["query_tokens"]["input"] == 0 and m["index_tokens"] == {"input": 0, "output": 0}
    # every gold passage of this toy set is one keyword away: both baselines find them all
    assert result["methods"]["bm25"]["recall"]["5"] == 1.0
    assert result["methods"]["dense"]["recall"]["5"] == 1.0
    assert "neo4j_password" not in result["config"]["settings"]
    json.dumps(result)  # serialisable as is


def test_rankings_are_deterministic(toy: Path, tmp_path: Path) -> None:
    a = _bench(toy, tmp_path, ["bm25", "dense"])
    b = _bench(toy, tmp_path, ["bm25", "dense"])
    for name in ("bm25", "dense"):
        assert [q["retrieved"] for q in a["methods"][name]["per_question"]] == [
            q["retrieved"] for q in b["methods"][name]["per_question"]
        ]


def test_writers_produce_json_markdown_and_png(toy: Path, tmp_path: Path) -> None:
    result = _bench(toy, tmp_path, ["bm25"])
    out = tmp_path / "out"
    write_json(result, out / "toyqa.json")
    (out / "not-a-result.json").write_text("{broken")
    assert load_results(out) == [json.loads((out / "toyqa.json").read_text())]
    written = write_summary(out)
    assert [p.name for p in written] == [SUMMARY_MD, RECALL_PNG, TOKENS_PNG]
    for png in written[1:]:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / SUMMARY_MD).read_text()
    r5 = 100 * result["methods"]["bm25"]["recall"]["5"]
    assert f"| bm25 | {100 * result['methods']['bm25']['recall']['2']:.1f} | {r5:.1f} |" in md
    assert "## toyqa" in md


def test_recall_table_marks_methods_missing_from_a_dataset() -> None:
    def res(name: str, methods: dict[str, float]) -> dict[str, Any]:
        return {
            "dataset": {"name": name},
            "methods": {m: {"recall": {"2": v / 2, "5": v}} for m, v in methods.items()},
        }

    table = recall_table([res("a", {"bm25": 0.5, "dense": 0.25}), res("b", {"bm25": 1.0})])
    lines = table.splitlines()
    assert lines[0] == "| method | a R@2 | a R@5 | b R@2 | b R@5 |"
    assert lines[2] == "| bm25 | 25.0 | 50.0 | 50.0 | 100.0 |"
    assert lines[3] == "| dense | 12.5 | 25.0 | - | - |"


def test_markdown_report_shows_skipped_answers(toy: Path, tmp_path: Path) -> None:
    result = _bench(toy, tmp_path, ["bm25"])
    result["answers"] = {"skipped": "answers skipped: Ollama is unreachable"}
    assert "Answers: answers skipped: Ollama is unreachable" in markdown_report([result])


def test_a_text_corpus_with_reference_answers_is_scored_by_coverage(tmp_path: Path) -> None:
    folder = tmp_path / "guides"
    folder.mkdir()
    (folder / "guide.md").write_text(
        "# Skin care\n\n## Sun\n\nSunscreen protects the skin from ultraviolet light.\n\n"
        "## Treatment\n\nMohs surgery removes skin cancer layer by layer.\n",
        encoding="utf-8",
    )
    qs = [
        {
            "id": "a",
            "question": "What does sunscreen do?",
            "type": "Fact Retrieval",
            "answers": ["Sunscreen protects skin from ultraviolet light."],
        },
        {
            "id": "b",
            "question": "How does Mohs surgery work?",
            "type": "Complex Reasoning",
            "answers": ["It removes cancer layer by layer."],
        },
    ]
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in qs), encoding="utf-8")
    settings = Settings(home=tmp_path / "home", neo4j_uri="bolt://127.0.0.1:1")
    result = run_bench(settings, load_dataset(folder), BenchConfig(extractors=[], methods=["bm25"]))
    assert result["dataset"]["kind"] == "coverage" and result["dataset"]["passages"] == 2
    bm25 = result["methods"]["bm25"]
    assert bm25["recall"] is None and set(bm25["scores"]) == {"cov@5", "hit@5"}
    assert bm25["scores"]["cov@5"] == 1.0 and bm25["scores"]["hit@5"] == 1.0
    assert set(bm25["by_type"]) == {"Fact Retrieval", "Complex Reasoning"}
    md = markdown_report([result])
    assert "| bm25 | 100.0 | 100.0 |" in md and "Complex Reasoning" in md
    # The bound of any ranking: here each answer lies whole in one passage.
    assert result["methods"]["ceiling"]["scores"] == {"cov@5": 1.0, "hit@5": 1.0}
    assert "| ceiling | 100.0 | 100.0 |" in md
    assert "ceiling" not in recall_table([result])  # a coverage set has no recall row


def test_books_in_a_corpus_folder_are_scored_by_coverage_and_by_their_book(
    tmp_path: Path,
) -> None:
    """A folder of books (text files in `corpus/`, as the novel set ships them) whose questions
    name their book: book@5 says whether the top 5 holds a passage of that book."""
    corpus = tmp_path / "books" / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "Novel-1.txt").write_text(
        "The lighthouse keeper rowed to the island every morning.", encoding="utf-8"
    )
    (corpus / "Novel-2.txt").write_text(
        "The baker sold rye bread in the market square.", encoding="utf-8"
    )
    qs = [
        {
            "id": "a",
            "question": "Where did the lighthouse keeper row?",
            "type": "Fact Retrieval",
            "source": "Novel-1",
            "answers": ["He rowed to the island."],
        },
        {
            "id": "b",
            "question": "What did the lighthouse keeper sell?",
            "type": "Fact Retrieval",
            "source": "Novel-2",
            "answers": ["Rye bread in the market."],
        },
    ]
    folder = tmp_path / "books"
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in qs), encoding="utf-8")
    data = load_dataset(folder)
    assert data.kind == "coverage" and len(data.documents) == 2
    assert [q.source for q in data.questions] == ["Novel-1", "Novel-2"]
    settings = Settings(home=tmp_path / "home", neo4j_uri="bolt://127.0.0.1:1")
    result = run_bench(settings, data, BenchConfig(extractors=[], methods=["bm25"]))
    per_q = {q["id"]: q["scores"] for q in result["methods"]["bm25"]["per_question"]}
    # BM25 ranks only passages that share a word with the question: both questions get the
    # lighthouse book, which is the first question's and not the second's
    assert per_q["a"]["book@5"] == 1.0 and per_q["b"]["book@5"] == 0.0
    assert per_q["a"]["hit@5"] == 1.0
    assert set(result["methods"]["bm25"]["scores"]) == {"cov@5", "hit@5", "book@5"}
