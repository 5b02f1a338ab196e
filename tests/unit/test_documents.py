"""Input loading and chunking (the tokenizer is the real uncased WordPiece of MiniLM and bge,
from the vocabulary the package ships)."""

import json
from pathlib import Path

import pytest

from terag_neo4j.core.documents import Document, InputError
from terag_neo4j.indexing.chunking import pack, sections
from terag_neo4j.indexing.loading import (
    default_tokenizer,
    load_documents,
    split_document,
    to_passages,
)
from terag_neo4j.indexing.token_windows import chunk_text


def tokens(text: str) -> int:
    return len(default_tokenizer()(text, add_special_tokens=False)["input_ids"])  # type: ignore[operator]


def test_chunks_respect_size_and_overlap_and_keep_words() -> None:
    text = " ".join(f"word{i}" for i in range(400))
    chunks = chunk_text(text, 100, 20, default_tokenizer())
    assert len(chunks) > 1
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
    assert p.heading == "T"  # a title given with the document names it
    assert p.hash == split_document(doc, 50, 10)[0].hash


MARKDOWN = """Intro paragraph before any heading.

## Treatment

Surgery removes the tumour. Radiation therapy kills cancer cells.

### Mohs surgery

Mohs surgery removes thin layers of skin one at a time.

## Follow-up care

Skin exams happen once a year.
"""


def test_markdown_sections_give_heading_paths() -> None:
    got = [(s.path, s.paragraphs) for s in sections(MARKDOWN)]
    assert got == [
        ((), ("Intro paragraph before any heading.",)),
        (("Treatment",), ("Surgery removes the tumour. Radiation therapy kills cancer cells.",)),
        (
            ("Treatment", "Mohs surgery"),
            ("Mohs surgery removes thin layers of skin one at a time.",),
        ),
        (("Follow-up care",), ("Skin exams happen once a year.",)),
    ]


def test_passages_carry_their_heading_path_and_heading() -> None:
    doc = Document(id="bcc.md", title="Basal cell skin cancer", text=MARKDOWN)
    ps = split_document(doc, 256, 32)
    assert [p.title for p in ps] == [
        "Basal cell skin cancer",
        "Basal cell skin cancer > Treatment",
        "Basal cell skin cancer > Treatment > Mohs surgery",
        "Basal cell skin cancer > Follow-up care",
    ]
    assert [p.heading for p in ps] == [
        "Basal cell skin cancer",
        "Treatment",
        "Mohs surgery",
        "Follow-up care",
    ]
    assert [p.id for p in ps] == [f"bcc.md#{i}" for i in range(4)]


def test_a_file_name_title_is_shown_but_names_no_concept(tmp_path: Path) -> None:
    (tmp_path / "guide.txt").write_text("Plain prose. " * 200, encoding="utf-8")
    (doc,) = load_documents([tmp_path / "guide.txt"])
    ps = split_document(doc, 64, 8)
    assert len(ps) > 1 and all(p.title == "guide" and p.heading == "" for p in ps)


def test_plain_text_headings_are_lines_on_their_own() -> None:
    text = "Getting started\n\nInstall the package first.\n\nUsage\n\nRun the command.\nIt prints a line.\n"
    got = [(s.path, s.paragraphs) for s in sections(text)]
    assert got == [
        (("Getting started",), ("Install the package first.",)),
        (("Usage",), ("Run the command. It prints a line.",)),
    ]


def test_long_single_line_paragraphs_are_never_merged() -> None:
    one, two = ("Alpha beta gamma. " * 40).strip(), ("Delta epsilon zeta. " * 40).strip()
    (section,) = sections(f"{one}\n{two}\n")
    assert section.paragraphs == (one, two)
    passages = pack(section.paragraphs, 256, 32, default_tokenizer())
    # each passage holds sentences of one paragraph only: the books of a guideline file stay apart
    assert all(("Alpha" in p) != ("Delta" in p) for p in passages)


def test_packing_keeps_sentences_whole_within_size_and_overlaps_them() -> None:
    sentences = [f"Sentence number {i} says something about topic {i}." for i in range(60)]
    passages = pack((" ".join(sentences),), 64, 16, default_tokenizer())
    assert len(passages) > 2
    assert all(tokens(p) <= 64 for p in passages)
    assert all(p.endswith(".") for p in passages)  # cut between sentences, never inside one
    first_of_next = passages[1].split(". ")[0] + "."
    assert first_of_next in passages[0]  # the next passage starts with the previous one's tail


def test_a_long_jsonl_record_is_chunked_like_a_file(tmp_path: Path) -> None:
    f = tmp_path / "records.jsonl"
    long_text = " ".join(f"Fact {i} is stated here." for i in range(200))
    f.write_text(
        json.dumps({"id": "r1", "title": "Short", "text": "One fact."})
        + "\n"
        + json.dumps({"id": "r2", "title": "Long", "text": long_text})
        + "\n",
        encoding="utf-8",
    )
    ps = list(to_passages(load_documents([f]), 256, 32))
    assert ps[0].id == "r1" and ps[0].heading == "Short"
    long = [p for p in ps if p.doc_id == "r2"]
    assert len(long) > 1 and [p.id for p in long] == [f"r2#{i}" for i in range(len(long))]
    assert all(tokens(p.text) <= 256 for p in long)
    assert " ".join(p.text for p in long).count("Fact 199 is stated here.") >= 1


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
    docs = {d.title: (d.text, d.title_is_name) for d in load_documents([tmp_path])}
    assert docs == {"Real Title": ("Body text.", True), "c d": ("No heading here.", False)}
