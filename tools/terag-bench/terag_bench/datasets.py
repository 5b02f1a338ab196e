"""Benchmark folders: `corpus.jsonl` passages and `questions.jsonl` with gold passage ids, or a
corpus of text files (`*.txt`, `*.md`: indexed as a user would, chunked) with questions whose
reference answers are scored by answer coverage (GraphRAG-Bench's medical guidelines and
novels; the text files lie in the folder itself or in its `corpus/`).

The data is read where it lies (a path on the command line, `TERAG_DATASETS`, or
`../shared/datasets` next to the repository); it is never copied into the project.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terag_neo4j.core.documents import Document, InputError
from terag_neo4j.errors import TeragError
from terag_neo4j.indexing.loading import jsonl_records, load_documents

if TYPE_CHECKING:
    from terag_bench.recorded import RecordedExtractor

REPO_ROOT = Path(__file__).resolve().parents[3]  # the checkout: tools/terag-bench/terag_bench
RECORDED_FILE = "recorded_extractions.jsonl"


class DatasetError(TeragError, ValueError):
    """A benchmark folder that cannot be used; the message says which file and why."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answers: tuple[str, ...]
    gold_ids: tuple[str, ...]
    gold_titles: tuple[str, ...] = ()
    type: str | None = None
    source: str | None = None  # the corpus file (stem) a coverage question is about, if named


@dataclass(frozen=True)
class Dataset:
    name: str
    path: Path
    documents: list[Document]
    questions: list[Question]
    recorded_extractions: Path | None
    subset: bool = False  # True when the corpus was cut down (tests only)
    # `recall`: questions name their gold passages; `coverage`: only reference answers
    kind: str = "recall"

    def extractor(self, name: str) -> str | RecordedExtractor:
        """What `TeragClient(extractor=...)` takes for the backend `name`: the name itself, or
        for `recorded` the replay of this folder's recorded extractions."""
        if name != "recorded":
            return name
        if self.recorded_extractions is None:
            raise DatasetError(f"{self.name} has no {RECORDED_FILE}")
        from terag_bench.recorded import RecordedExtractor

        return RecordedExtractor(self.recorded_extractions)

    @property
    def passage_ids(self) -> list[str]:
        return [d.id for d in self.documents]

    def fingerprint(self) -> str:
        """Short hash of the passage ids, naming a cut-down corpus's own namespace."""
        return hashlib.sha256("\n".join(sorted(self.passage_ids)).encode()).hexdigest()[:8]


def dataset_root() -> Path:
    env = os.environ.get("TERAG_DATASETS")
    return Path(env) if env else (REPO_ROOT.parent / "shared" / "datasets").resolve()


def resolve_dataset(name_or_path: str | Path) -> Path:
    """A folder path as given, else a folder of that name under the dataset root."""
    p = Path(name_or_path)
    if p.is_dir():
        return p
    candidate = dataset_root() / str(name_or_path)
    if candidate.is_dir():
        return candidate
    raise DatasetError(
        f"{name_or_path}: no such dataset folder (looked here and in {dataset_root()}; "
        "set TERAG_DATASETS to the folder holding the datasets)"
    )


def text_corpus(folder: Path) -> list[Path]:
    """The text files a folder without `corpus.jsonl` holds as its corpus: in the folder
    itself, else in its `corpus/` subfolder."""
    for place in (folder, folder / "corpus"):
        if place.is_dir():
            files = sorted(f for f in place.iterdir() if f.suffix.lower() in {".txt", ".md"})
            if files:
                return files
    return []


def list_datasets(root: Path | None = None) -> list[Path]:
    base = root or dataset_root()
    if not base.is_dir():
        return []
    return sorted(
        p
        for p in base.iterdir()
        if (p / "questions.jsonl").is_file() and ((p / "corpus.jsonl").is_file() or text_corpus(p))
    )


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(f"{path}: missing")
    try:
        with path.open(encoding="utf-8") as f:
            out = [rec for _, rec in jsonl_records(f, path)]
    except InputError as e:
        raise DatasetError(str(e)) from e
    return out


def load_dataset(
    folder: str | Path, limit: int | None = None, max_passages: int | None = None
) -> Dataset:
    """The folder's passages and its first `limit` questions.

    `max_passages` cuts the corpus down for unit-sized test runs: the gold passages of the
    selected questions are always kept, then the corpus order fills up the rest.
    """
    path = resolve_dataset(folder)
    if not (path / "corpus.jsonl").is_file() and text_corpus(path):
        return _coverage_dataset(path, limit)
    docs: list[Document] = []
    seen: set[str] = set()
    for i, rec in enumerate(_records(path / "corpus.jsonl"), 1):
        if not isinstance(rec.get("text"), str) or rec.get("id") is None:
            raise DatasetError(f"{path / 'corpus.jsonl'}:{i}: needs string 'id' and 'text'")
        pid = str(rec["id"])
        if pid in seen:
            raise DatasetError(f"{path / 'corpus.jsonl'}:{i}: duplicate passage id {pid!r}")
        seen.add(pid)
        docs.append(
            Document(
                id=pid,
                text=rec["text"],
                title=str(rec.get("title") or ""),
                source=f"{path.name}/corpus.jsonl:{i}",
                is_passage=True,
            )
        )
    questions: list[Question] = []
    for i, rec in enumerate(_records(path / "questions.jsonl"), 1):
        gold = tuple(str(g) for g in rec.get("gold_ids") or ())
        if not gold:
            raise DatasetError(f"{path / 'questions.jsonl'}:{i}: no gold_ids")
        missing = [g for g in gold if g not in seen]
        if missing:
            raise DatasetError(
                f"{path / 'questions.jsonl'}:{i}: gold ids not in the corpus: {missing}"
            )
        questions.append(
            Question(
                id=str(rec["id"]),
                question=str(rec["question"]),
                answers=tuple(str(a) for a in rec.get("answers") or ()),
                gold_ids=gold,
                gold_titles=tuple(str(t) for t in rec.get("gold_titles") or ()),
                type=rec.get("type"),
            )
        )
    if limit is not None:
        questions = questions[: max(limit, 0)]
    subset = False
    if max_passages is not None and max_passages < len(docs):
        keep = {g for q in questions for g in q.gold_ids}
        for d in docs:
            if len(keep) >= max_passages:
                break
            keep.add(d.id)
        docs = [d for d in docs if d.id in keep]
        subset = True
    recorded = path / RECORDED_FILE
    return Dataset(
        name=path.name,
        path=path,
        documents=docs,
        questions=questions,
        recorded_extractions=recorded if recorded.is_file() else None,
        subset=subset,
    )


def _coverage_dataset(path: Path, limit: int | None) -> Dataset:
    """Text files indexed as a user would (`load_documents`: chunked by their structure), and
    questions with reference answers only."""
    docs = list(load_documents(text_corpus(path)))
    questions: list[Question] = []
    for i, rec in enumerate(_records(path / "questions.jsonl"), 1):
        answers = tuple(str(a) for a in rec.get("answers") or ())
        if not answers:
            raise DatasetError(f"{path / 'questions.jsonl'}:{i}: no answers to score against")
        questions.append(
            Question(
                id=str(rec["id"]),
                question=str(rec["question"]),
                answers=answers,
                gold_ids=(),
                type=rec.get("type"),
                source=str(rec["source"]) if rec.get("source") else None,
            )
        )
    if limit is not None:
        questions = _stratified(questions, limit)
    return Dataset(path.name, path, docs, questions, None, kind="coverage")


def _stratified(questions: list[Question], limit: int) -> list[Question]:
    """The first questions of each type in turn, `limit` in all: a cut keeps every type."""
    by_type: dict[str | None, list[Question]] = {}
    for q in questions:
        by_type.setdefault(q.type, []).append(q)
    out: list[Question] = []
    i = 0
    while len(out) < min(limit, len(questions)):
        for qs in by_type.values():
            if i < len(qs) and len(out) < limit:
                out.append(qs[i])
        i += 1
    return out


def namespace_for(dataset: Dataset, extractor: str, prefix: str = "bench") -> str:
    """`bench_<folder>_<extractor>`; a cut-down corpus gets its own, suffixed by its hash."""
    folder = re.sub(r"[^A-Za-z0-9_-]", "_", dataset.name)
    ns = f"{prefix}_{folder}_{extractor}"
    if dataset.subset:
        ns += f"_s{dataset.fingerprint()}"
    if len(ns) > 64:  # Neo4j-side namespace names are capped; keep them unique when cut
        ns = f"{ns[:55]}_{hashlib.sha256(ns.encode()).hexdigest()[:8]}"
    return ns
