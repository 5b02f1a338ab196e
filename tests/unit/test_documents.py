"""Input loading and chunking (the tokenizer is the real all-MiniLM-L6-v2 one, offline)."""

import json
from pathlib import Path

import pytest

from terag_neo4j.documents import (
    Document,
    InputError,
    chunk_text,
    load_documents,
    split_document,
    to_passages,
)


def test_chunks_respect_size_and_overlap_and_keep_words() -> None:
    text = " ".join(f"word{i}" for i in range(400))
    chunks = chunk_text(text, max_tokens=100, overlap=20)
    assert len(chunks) > 1
    from terag_neo4j.documents import default_tokenizer

    tok = default_tokenizer()
    for c in chunks:
        assert len(tok(c, add_special_tokens=False)["input_ids"]) <= 100  # type: ignore[operator]
        assert not c.startswith("ord")  # cut at word boundaries of the original text
    # consecutive chunks overlap
    assert chunks[0].split()[-1] in chunks[1]
    assert chunks[-1].endswith("word399")


def test_short_text_is_one_chunk_and_ids_are_stable() -> None:
    doc = Document(id="d1", title="T", text="A short text.")
    (p,) = split_document(doc, 50, 10)
    assert (p.id, p.doc_id, p.position, p.content) == ("d1", "d1", 0, "T\nA short text.")
    assert p.hash == split_document(doc, 50, 10)[0].hash


def test_records_that_are_passages_stay_whole() -> None:
    doc = Document(id="x:1", title="T", text="word " * 1000, is_passage=True)
    assert len(split_document(doc, 50, 10)) == 1


def test_empty_documents_are_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    docs = [Document(id="a", text="  \n"), Document(id="b", text="Real text.")]
    got = list(to_passages(docs, 50, 10))
    assert [p.id for p in got] == ["b"]
    assert "skipping empty document 'a'" in caplog.text


def test_load_files_folders_jsonl_and_bad_encoding(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.md").write_text("Markdown text", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Plain text", encoding="utf-8")
    (tmp_path / "c.jsonl").write_text(
        json.dumps({"id": "p1", "title": "T", "text": "Passage"}) + "\n", encoding="utf-8"
    )
    (tmp_path / "bad.txt").write_bytes(b"caf\xe9 latin-1")
    (tmp_path / "ignored.bin").write_bytes(b"\x00")
    errors: list[str] = []
    docs = list(load_documents([tmp_path], errors))
    assert sorted(d.text for d in docs) == ["Markdown text", "Passage", "Plain text"]
    assert len(errors) == 1 and "bad.txt" in errors[0] and "UTF-8" in errors[0]
    with pytest.raises(InputError, match=r"bad\.txt"):
        list(load_documents([tmp_path / "bad.txt"]))


def test_malformed_jsonl_names_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_text('{"id": "1", "text": "ok"}\n{broken\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"x.jsonl:2"):
        list(load_documents([f]))


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        list(load_documents([tmp_path / "nope"]))


def test_markdown_heading_is_the_title(tmp_path: Path) -> None:
    (tmp_path / "a_b.md").write_text("# Real Title\n\nBody text.", encoding="utf-8")
    (tmp_path / "c_d.txt").write_text("No heading here.", encoding="utf-8")
    docs = {d.title: d.text for d in load_documents([tmp_path])}
    assert docs == {"Real Title": "Body text.", "c d": "No heading here."}
