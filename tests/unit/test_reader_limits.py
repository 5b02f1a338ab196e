"""The readers' limits, on hostile files made in the test: a .docx that inflates 1000:1, one whose
zip lies about a size, PDFs whose pages share one large content stream or draw one form over
and over, an HTML page over its size limit. Each is refused with a one-line `TooLarge` naming
the file and the limit, fast and without inflating or parsing what the limit is about."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from terag_neo4j.core.documents import InputError
from terag_neo4j.indexing.readers import common, read_file
from terag_neo4j.indexing.readers.common import TooLarge
from tests.fixtures.bombs import (
    MiB,
    text_ops,
    write_docx_bomb,
    write_form_bomb_pdf,
    write_lying_docx,
    write_raw_pdf,
    write_shared_stream_pdf,
)
from tests.fixtures.document_files import article_html, write_docx


def refused(path: Path, trace: bool = False) -> tuple[TooLarge, float, float]:
    """The error reading `path` raised, the seconds it took and, with `trace`, the peak Python
    memory in MiB (tracemalloc slows pypdf's object parsing many times over: not for PDFs). The
    readers' libraries are imported first: their import is not the file's cost."""
    for module in ("docx", "pypdf", "trafilatura"):
        common.require(module)
    if trace:
        tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(TooLarge) as info:
            read_file(path, path.name, path.name)
        peak = tracemalloc.get_traced_memory()[1] / MiB
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    return info.value, time.monotonic() - start, peak


def test_a_docx_that_inflates_to_600_mib_is_refused_before_inflating(tmp_path: Path) -> None:
    bomb = write_docx_bomb(tmp_path / "bomb.docx", 600 * MiB)
    assert bomb.stat().st_size < MiB
    error, seconds, peak = refused(bomb, trace=True)
    assert "inflates to over 629" in str(error) and "268,435,456-byte limit" in str(error)
    assert seconds < 5 and peak < 16


def test_a_docx_member_compressed_beyond_the_ratio_is_refused(tmp_path: Path) -> None:
    bomb = write_docx_bomb(tmp_path / "ratio.docx", 64 * MiB)  # under the total, at ~1000:1
    error, seconds, peak = refused(bomb, trace=True)
    assert "'word/document.xml' in the .docx is compressed" in str(error)
    assert "100:1 limit" in str(error) and seconds < 5 and peak < 16


def test_a_docx_with_too_many_parts_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = write_docx(tmp_path / "parts.docx", [("p", "Zeppelins flew over Lake Constance.")])
    monkeypatch.setattr(common, "MAX_ZIP_MEMBERS", 3)
    assert "parts in the .docx, beyond the limit of 3" in str(refused(doc)[0])


def test_a_zip_that_lies_about_a_size_never_inflates_past_it(tmp_path: Path) -> None:
    # The check trusts declared sizes because zipfile stops at them: a larger member is broken
    lying = write_lying_docx(tmp_path / "lying.docx", inflated=8 * MiB, declared=4096)
    with pytest.raises(InputError) as info:
        read_file(lying, "lying.docx", "lying.docx")
    assert not isinstance(info.value, TooLarge)
    assert "not a readable .docx" in str(info.value) and "CRC" in str(info.value)


def test_an_ordinary_docx_is_still_read(tmp_path: Path) -> None:
    doc = write_docx(tmp_path / "ok.docx", [("h1", "Gliders"), ("p", "Lilienthal flew gliders.")])
    (read,) = read_file(doc, "ok.docx", "ok.docx")
    assert "Lilienthal" in read.text


def test_thousands_of_pages_sharing_one_content_stream_are_refused(tmp_path: Path) -> None:
    bomb = write_shared_stream_pdf(tmp_path / "shared.pdf", pages=3000, stream_bytes=MiB)
    error, seconds, _ = refused(bomb)
    assert "its pages draw over" in str(error) and "100 times its size" in str(error)
    assert seconds < 5


def test_content_beyond_the_absolute_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    streams = [text_ops(3000, f"Page{i}") for i in range(4)]  # distinct, ~120 KB each
    pdf = write_raw_pdf(tmp_path / "big.pdf", streams, [0, 1, 2, 3])
    monkeypatch.setattr(common, "MAX_PDF_CONTENT", 300_000)
    assert "beyond the 300,000-byte limit of a PDF" in str(refused(pdf)[0])


def test_pages_beyond_the_limit_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pdf = write_raw_pdf(tmp_path / "pages.pdf", [text_ops(2)], [0] * 12)
    monkeypatch.setattr(common, "MAX_PDF_PAGES", 10)
    assert "more than 10 pages, the limit of a PDF" in str(refused(pdf)[0])


def test_a_form_drawn_over_and_over_runs_out_of_operations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pypdf parses a form XObject each time a page draws it; no page's own content shows that
    pdf = write_form_bomb_pdf(tmp_path / "form.pdf", draws=2000, form_bytes=4096)
    monkeypatch.setattr(common, "PDF_OPERATIONS_FROM", 20_000)
    error, seconds, _ = refused(pdf)
    assert "over 20,000 drawing operations" in str(error) and seconds < 10


def test_an_ordinary_pdf_is_still_read_with_its_pages(tmp_path: Path) -> None:
    pdf = write_raw_pdf(tmp_path / "ok.pdf", [text_ops(3), text_ops(2, "Glider")], [0, 1])
    (read,) = read_file(pdf, "ok.pdf", "ok.pdf")
    assert "Zeppelin 2 flew" in read.text and "Glider 1 flew" in read.text
    assert read.pages == (0, read.text.index("Glider 0"))


def test_html_over_its_size_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "big.html"
    page.write_text(article_html("Kites", [("History", "Kites came from China. " * 200)]))
    monkeypatch.setattr(common, "MAX_HTML_BYTES", 1024)
    error = refused(page)[0]
    assert "bytes of HTML, beyond the 1,024-byte limit of a page" in str(error)


def test_jsonl_records_take_the_source_they_are_given(tmp_path: Path) -> None:
    records = tmp_path / "tmp-copy.jsonl"
    records.write_text('{"id": "a", "text": "one"}\n{"id": "b", "text": "two"}\n')
    docs = read_file(records, "x", "uploaded.jsonl")
    assert [d.source for d in docs] == ["uploaded.jsonl:1", "uploaded.jsonl:2"]
    # `terag index` passes the absolute path, as before
    assert read_file(records, "x", str(records))[1].source == f"{records}:2"
