"""Citations: markers parsed from reader replies (fixed reply strings stand in for the LLM: a
test of parsing only), mapped to the passages' provenance; the citation line a user reads."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from terag_neo4j.cli.output import format_answer, to_jsonable
from terag_neo4j.core.documents import Document, Passage
from terag_neo4j.core.results import AnswerResult, Provenance, RetrievalResult, RetrievedPassage
from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.llm import Completion
from terag_neo4j.retrieval.answer import cite, parse_answer, read_stream, strip_markers

GUIDE = Provenance("/docs/guideline.pdf", ("Dosing", "Adults"), 14, 15, 1200, 1900)
PASSAGES = [
    RetrievedPassage("g#3", "/docs/guideline.pdf", "Dosing", "Adults take 5 mg.", 0.5, GUIDE),
    RetrievedPassage("n#0", "/docs/notes.md", "Notes", "Children take less.", 0.3),
    RetrievedPassage(
        "u", "u", "", "Web page.", 0.1, Provenance("https://example.org/a/b", ("Intro",))
    ),
]


def test_citation_line_names_the_file_pages_and_headings() -> None:
    assert GUIDE.citation() == "guideline.pdf p. 14\u201315 · Dosing > Adults"
    assert Provenance("/x/a.pdf", (), 3, 3).citation() == "a.pdf p. 3"
    # A URL stays whole; no source: the fallback (the document id)
    assert PASSAGES[2].citation() == "https://example.org/a/b · Intro"
    assert PASSAGES[1].citation() == "notes.md"
    assert Provenance().citation() == ""


def test_provenance_from_a_read_without_the_properties_is_empty_not_an_error() -> None:
    # A passage written before provenance existed reads back with none of its keys
    assert Provenance.from_map(None) == Provenance()
    assert Provenance.from_map({"source": None, "heading_path": None}) == Provenance()
    got = Provenance.from_map({"source": "/a.md", "heading_path": ["H"], "page_start": 2})
    assert got == Provenance("/a.md", ("H",), 2, None, None, None)
    assert Provenance.from_map(got.to_dict()) == got


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ('{"answer": "5 mg", "passages": [1]}', "5 mg [1]"),
        ('{"answer": "5 mg", "passages": [1, 2]}', "5 mg [1][2]"),
        # markers the model already wrote inline are not repeated
        ('{"answer": "5 mg [1]", "passages": [1, 3]}', "5 mg [1] [3]"),
        # cut off by the token cap inside the list: the numbers it had
        ('{"answer": "5 mg"\n,"passages": [\n 2,\n 1', "5 mg [2][1]"),
        # a reply without the field (a server that ignores `format`): no markers added
        ('{"answer": "5 mg"}', "5 mg"),
        ('{"answer": "", "passages": [1]}', ""),
    ],
)
def test_parse_answer_renders_the_passage_numbers_as_markers(reply: str, answer: str) -> None:
    assert parse_answer(reply) == answer


def test_markers_map_to_the_passages_provenance_in_order_of_first_use() -> None:
    citations, uncited = cite("Adults take 5 mg [1]. Children take less [2][1].", PASSAGES)
    assert [(c.marker, c.passage_id) for c in citations] == [(1, "g#3"), (2, "n#0")]
    assert citations[0].provenance == GUIDE and citations[0].doc_id == "/docs/guideline.pdf"
    assert uncited == []


def test_a_claim_without_a_marker_is_uncited() -> None:
    citations, uncited = cite("Adults take 5 mg [1]. It is safe. Ask a doctor!", PASSAGES)
    assert [c.marker for c in citations] == [1]
    assert uncited == ["It is safe.", "Ask a doctor!"]
    # One answer, no marker at all: the whole of it
    assert cite("5 mg", PASSAGES) == ([], ["5 mg"])
    assert cite("", PASSAGES) == ([], [])


def test_markers_past_the_passages_cite_nothing() -> None:
    citations, uncited = cite("5 mg [4]. Less [0]. More [1, 9].", PASSAGES)
    assert [c.marker for c in citations] == [1]
    assert uncited == ["5 mg.", "Less."]


def test_strip_markers_leaves_the_words() -> None:
    assert strip_markers("Paris [2]. Big [1, 3] city [4]") == "Paris. Big city"


def test_answer_json_and_text_carry_citations_and_uncited_claims() -> None:
    res = RetrievalResult("q", "ns", [], [], list(PASSAGES), "pagerank")
    citations, uncited = cite("5 mg [1]. Safe.", PASSAGES)
    ans = AnswerResult("5 mg [1]. Safe.", res, 1, 2, citations, uncited)
    out = to_jsonable(ans)
    assert out["citations"][0]["marker"] == 1
    assert out["citations"][0]["provenance"]["page_start"] == 14
    assert out["citations"][0]["provenance"]["heading_path"] == ["Dosing", "Adults"]
    assert out["uncited"] == ["Safe."]
    assert out["retrieval"]["passages"][0]["provenance"]["source"] == "/docs/guideline.pdf"
    text = format_answer(ans)
    assert "[1] guideline.pdf p. 14\u201315 · Dosing > Adults" in text
    assert "uncited: Safe." in text


def test_ingest_report_counts_documents_new_changed_and_unchanged() -> None:
    docs = [Document(id=d, text="x") for d in ("a", "b", "c", "d")]

    def p(doc: str, i: int) -> Passage:
        return Passage(f"{doc}#{i}", doc, i, "", "x")

    passages = [p("a", 0), p("a", 1), p("b", 0), p("c", 0), p("d", 0)]
    report = IngestReport("run", "ns", "spacy", "m")
    # a: one passage replaced; b: unchanged; c: new; d: lost a passage (removed) only
    present = {"a#0", "a#1", "b#0", "d#0"}
    report.count_documents(docs, passages, [p("a", 1), p("c", 0)], {"d": ["d#1"]}, present)
    assert (report.documents_total, report.documents_new) == (4, 1)
    assert (report.documents_changed, report.documents_unchanged) == (2, 1)
    assert report.written_documents == ["a", "c", "d"]
    assert "documents: 4 (1 new, 2 changed, 1 unchanged)" in report.summary()
    assert "written_documents" not in report.to_record()  # a list per document stays out


class FixedReplyLLM:
    """A stand-in for the LLM in this parsing test: streams a fixed reply in pieces."""

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces

    def stream(self, *args: object, **kwargs: object) -> Generator[str, None, Completion]:
        yield from self.pieces
        return Completion("".join(self.pieces), 10, 5, 0.1, "fixed", "stop")


def test_a_streamed_answer_ends_with_its_markers() -> None:
    llm = FixedReplyLLM(['{"answer": "Ferdinand', ' Porsche"', ', "passages": [1, 2]}'])
    gen = read_stream(llm, "q", PASSAGES[:2])  # type: ignore[arg-type]
    pieces: list[str] = []
    while True:
        try:
            pieces.append(next(gen))
        except StopIteration as stop:
            answer, _ = stop.value
            break
    assert "".join(pieces) == answer == "Ferdinand Porsche [1][2]"
