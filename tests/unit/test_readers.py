"""Readers on real files the suite writes (fpdf2 PDFs, python-docx files, HTML pages): the text,
page numbers and heading paths that reach the passages, and the one-line errors for files that
cannot be read."""

from __future__ import annotations

import logging
import sys
import zipfile
from pathlib import Path

import pytest

from terag_neo4j.core.documents import Document, InputError, Passage
from terag_neo4j.indexing.loading import load_documents, to_passages
from terag_neo4j.indexing.readers import read_file
from terag_neo4j.indexing.readers.common import MissingReader
from tests.fixtures.document_files import (
    article_html,
    write_docx,
    write_encrypted_pdf,
    write_pdf,
)

PAGES = [
    f"Chapter text of page {n}. The {word} harbour opened in {1900 + n}.\n\n"
    f"A second paragraph on page {n} names the {word} lighthouse keeper."
    for n, word in enumerate(["northern", "eastern", "southern", "western"], 1)
]


def read(path: Path) -> Document:
    (doc,) = read_file(path, str(path), str(path))
    return doc


def passages(doc: Document, max_tokens: int = 24, overlap: int = 0) -> list[Passage]:
    return list(to_passages([doc], max_tokens, overlap))


def same_words(a: str, b: str) -> bool:
    return a.split() == b.split()


def test_pdf_pages_reach_every_passage(tmp_path: Path) -> None:
    doc = read(write_pdf(tmp_path / "harbours.pdf", PAGES, title="Harbour report"))
    assert doc.title == "Harbour report" and doc.title_is_name
    assert len(doc.pages) == 4 and doc.pages[0] == 0
    for n, word in enumerate(["northern", "eastern", "southern", "western"], 1):
        page_text = doc.text[doc.pages[n - 1] : doc.pages[n] if n < 4 else None]
        assert f"page {n}." in page_text and f"{word} lighthouse" in page_text
    ps = passages(doc)
    assert len(ps) >= 4
    for p in ps:
        assert p.char_start is not None and p.char_end is not None
        assert same_words(doc.text[p.char_start : p.char_end], p.text)
        # The page a passage names holds its text: "page N" and its harbour word.
        n = next(n for n in range(1, 5) if f"page {n}" in p.text)
        assert p.page_start == p.page_end == n, (p.text, p.page_start)
    # One passage over all pages spans them all.
    (whole,) = passages(doc, max_tokens=512)
    assert (whole.page_start, whole.page_end) == (1, 4)


def test_encrypted_and_scanned_pdfs_say_why_and_yield_nothing(tmp_path: Path) -> None:
    locked = write_encrypted_pdf(tmp_path / "locked.pdf", "Secret plans.", "pw")
    with pytest.raises(InputError, match=r"locked\.pdf: the PDF is encrypted") as e:
        read(locked)
    assert "\n" not in str(e.value)
    scanned = write_pdf(tmp_path / "scan.pdf", ["", ""], image_only=True)
    with pytest.raises(InputError, match=r"scan\.pdf: no text layer .*OCR \(e\.g\. ocrmypdf\)"):
        read(scanned)


def test_a_pdf_locked_only_for_editing_is_read(tmp_path: Path) -> None:
    path = write_encrypted_pdf(tmp_path / "restricted.pdf", "Readable by anyone.", "")
    assert "Readable by anyone." in read(path).text


def test_a_truncated_pdf_is_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    good = write_pdf(tmp_path / "good.pdf", PAGES)
    bad = tmp_path / "cut.pdf"
    bad.write_bytes(good.read_bytes()[:300])
    with caplog.at_level(logging.WARNING), pytest.raises(InputError, match=r"cut\.pdf: ") as e:
        read(bad)
    assert "\n" not in str(e.value)
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]  # no extra lines


def test_html_keeps_the_article_and_its_headings_and_drops_the_boilerplate(
    tmp_path: Path,
) -> None:
    sections = [
        ("Installation", "The tool installs with pip. It needs Python 3.11 or newer."),
        ("Configuration", "Settings live in a dotenv file. Each one has a default value."),
    ]
    path = tmp_path / "guide.html"
    path.write_text(article_html("Getting started", sections), encoding="utf-8")
    doc = read(path)
    assert doc.title == "Getting started"
    for heading, para in sections:
        assert f"## {heading}" in doc.text and para in doc.text
    for boilerplate in ("Products catalogue", "since 1999", "All rights reserved"):
        assert boilerplate not in doc.text
    by_heading = {p.heading_path: p for p in passages(doc, 64)}
    assert set(by_heading) == {("Installation",), ("Configuration",)}
    assert "pip" in by_heading[("Installation",)].text
    assert by_heading[("Configuration",)].title == "Getting started > Configuration"
    assert all(p.page_start is None for p in by_heading.values())


def test_html_in_a_legacy_encoding_is_decoded(tmp_path: Path) -> None:
    page = article_html("Café culture", [("Vienna", "Kaffeehäuser serve Melange.")])
    page = page.replace('charset="utf-8"', 'charset="windows-1252"')
    path = tmp_path / "cafe.htm"
    path.write_bytes(page.encode("cp1252"))
    doc = read(path)
    assert doc.title == "Café culture" and "Kaffeehäuser" in doc.text


def test_docx_headings_paragraphs_and_tables(tmp_path: Path) -> None:
    path = write_docx(
        tmp_path / "manual.docx",
        [
            ("title", "Pump manual"),
            ("h1", "Setup"),
            ("p", "Bolt the pump to the floor. Connect the inlet hose."),
            ("h2", "Wiring"),
            ("p", "Use a 16 ampere breaker."),
            ("table", [["Part", "Torque"], ["Bolt", "40 Nm"]]),
            ("h1", "Maintenance"),
            ("p", "Replace the seal every year."),
        ],
    )
    doc = read(path)
    assert doc.title == "Pump manual" and doc.pages == ()
    assert "Part | Torque\nBolt | 40 Nm" in doc.text
    paths = {p.heading_path: p.text for p in passages(doc, 64)}
    assert paths == {
        ("Setup",): "Bolt the pump to the floor. Connect the inlet hose.",
        ("Setup", "Wiring"): "Use a 16 ampere breaker. Part | Torque Bolt | 40 Nm",
        ("Maintenance",): "Replace the seal every year.",
    }


def test_a_broken_docx_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.docx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("word/document.xml", "<not xml")
    with pytest.raises(InputError, match=r"broken\.docx: not a readable \.docx") as e:
        read(path)
    assert "\n" not in str(e.value)


def test_the_type_comes_from_the_content(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pdf = tmp_path / "report.txt"
    pdf.write_bytes(write_pdf(tmp_path / "real.pdf", PAGES[:1]).read_bytes())
    md = tmp_path / "notes.pdf"
    md.write_text("# Notes\n\nPlain Markdown under a PDF name.", encoding="utf-8")
    page = tmp_path / "page.txt"
    page.write_text(article_html("Saved page", [("Part", "Saved from a browser.")]))
    with caplog.at_level(logging.WARNING):
        assert read(pdf).pages == (0,) and "northern harbour" in read(pdf).text
        assert read(md).title == "Notes" and read(md).text == "Plain Markdown under a PDF name."
        assert read(page).title == "Saved page" and "Products catalogue" not in read(page).text
    assert "report.txt: the extension says text but the content is a PDF" in caplog.text
    assert "notes.pdf: the extension says a PDF but the content is text" in caplog.text


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.md", b"", r"an empty file \(0 bytes\)"),
        ("blob.md", bytes(range(256)), r"binary data, not text as its extension says"),
        ("archive.docx", None, r"a zip archive \(not a \.docx\), not a Word"),
        ("latin.txt", "Müller".encode("latin-1"), r"not valid UTF-8 .*re-encode it"),
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00", r"binary data, unsupported"),
    ],
)
def test_unreadable_files_are_one_line_naming_the_file(
    tmp_path: Path, name: str, data: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if data is None:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("readme.txt", "not a word document")
    else:
        path.write_bytes(data)
    with pytest.raises(InputError, match=rf"{name}: {message}") as e:
        read(path)
    assert "\n" not in str(e.value)


def test_a_missing_reader_library_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_pdf(tmp_path / "a.pdf", PAGES[:1])
    monkeypatch.setitem(sys.modules, "pypdf", None)  # what an absent package imports as
    errors: list[str] = []
    assert list(load_documents([path], errors)) == []
    assert "pip install 'terag-neo4j[documents]'" in errors[0]
    with pytest.raises(MissingReader):
        read(path)


def test_an_unexpected_library_error_is_one_line_and_the_folder_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in PdfReader that fails as no reader code expects (a fake, for the error path)."""
    import pypdf

    def failing_reader(*args: object, **kwargs: object) -> None:
        raise RuntimeError("deep\ninside the parser")

    write_pdf(tmp_path / "a.pdf", PAGES[:1])
    (tmp_path / "b.md").write_text("# B\n\nStill indexed.", encoding="utf-8")
    monkeypatch.setattr(pypdf, "PdfReader", failing_reader)
    errors: list[str] = []
    assert [d.title for d in load_documents([tmp_path], errors)] == ["B"]
    assert errors == [
        f"{tmp_path / 'a.pdf'}: cannot read it as a PDF (RuntimeError: deep inside the parser)"
    ]
