"""From a PDF to a cited answer with the real reader (Ollama's SmolLM2): the answer's markers
name retrieved passages, each citation carries the PDF's path and the page its passage is on,
and the CLI prints the citation line. A small model may cite the wrong passage: the test holds
the mapping to be well-formed and logs how often the cited page holds the answer."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from terag_neo4j import cli
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from tests.fixtures.document_files import write_pdf

from .conftest import connection_env

pytestmark = [pytest.mark.integration, pytest.mark.ollama]
log = logging.getLogger(__name__)

PAGES = [
    "Zelbrin Patient Leaflet\n\nZelbrin is a medicine made by Halvorsen Pharma in Bergen.",
    "Dosing\n\nAdults take 5 mg of Zelbrin once a day. Children take 1 mg of Zelbrin.",
    "Storage\n\nKeep Zelbrin below 25 degrees. Zelbrin expires after 36 months.",
]
# question, the page that answers it, a word of the answer
QUESTIONS = [
    ("Which company makes Zelbrin?", 1, "Halvorsen"),
    ("How many mg of Zelbrin do adults take?", 2, "5"),
    ("Below how many degrees must Zelbrin be kept?", 3, "25"),
    ("In which city is Halvorsen Pharma?", 1, "Bergen"),
]


def test_a_pdf_question_gets_an_answer_citing_its_pages(
    base_settings: Settings,
    ollama_settings: Settings,
    namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pdf = write_pdf(tmp_path / "leaflet.pdf", PAGES, title="Zelbrin Patient Leaflet")
    # Passages small enough that each page is one: a citation then names its page
    settings = base_settings.with_overrides(
        ollama_host=ollama_settings.ollama_host,
        llm_model=ollama_settings.llm_model,
        chunk_tokens=40,
        chunk_overlap=0,
    )
    cited = right = correct = 0
    with TeragClient(settings, namespace=namespace) as client:
        client.index([pdf], progress=False)
        pages = [p.provenance.page_start for p in client.retrieve("Zelbrin", top_k=10).passages]
        assert sorted(pages) == [1, 2, 3]  # type: ignore[type-var]
        for question, page, word in QUESTIONS:
            ans = client.answer(question, top_k=3)
            ids = [p.id for p in ans.retrieval.passages]
            for c in ans.citations:
                # Each marker names a passage the reader was given, with the PDF's provenance
                assert 1 <= c.marker <= len(ids) and c.passage_id == ids[c.marker - 1]
                assert c.provenance.source == pdf.as_posix()
                assert c.provenance.page_start is not None and 1 <= c.provenance.page_start <= 3
            assert all(isinstance(u, str) and u for u in ans.uncited)
            cited += bool(ans.citations) and not ans.uncited
            right += any(
                (c.provenance.page_start or 0) <= page <= (c.provenance.page_end or 0)
                for c in ans.citations
            )
            correct += word in ans.answer
            log.info("%s -> %r cites %s", question, ans.answer, [c.marker for c in ans.citations])
    log.info(
        "fully cited: %d/%d; the answering page cited: %d; answer right: %d",
        cited,
        len(QUESTIONS),
        right,
        correct,
    )
    assert cited >= 1  # the reader names its passages

    for var, value in connection_env(settings).items():
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("OLLAMA_HOST", settings.ollama_host)
    monkeypatch.setenv("TERAG_LLM_MODEL", settings.llm_model)
    capsys.readouterr()
    assert cli.main(["ask", QUESTIONS[1][0], "-n", namespace, "-k", "3"]) == 0
    out = capsys.readouterr().out
    head = out.split("\n\n")[0].splitlines()
    assert head[0].startswith("answer: ")
    for line in head[1:]:  # a citation line per marker: the file and its page
        assert line.startswith(("  [", "  uncited: ")), out
        if line.startswith("  ["):
            assert "leaflet.pdf p. " in line, out
