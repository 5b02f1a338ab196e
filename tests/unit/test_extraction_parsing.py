"""Parsing and normalisation of extraction answers (no LLM: the answers are literal strings)."""

from terag_neo4j.core.concepts import CONCEPT, Concept, dedupe, normalize_name
from terag_neo4j.indexing.extraction import parse_batch, parse_lines


def test_normalize_name_ignores_case_accents_punctuation_spacing() -> None:
    assert normalize_name("Île-de-France") == normalize_name("ile de  FRANCE") == "ile de france"
    assert normalize_name("U.S.") == "u s"
    assert normalize_name("Radio City") != normalize_name("City Radio")
    assert normalize_name("  ...  ") == ""


def test_concept_identity_is_type_and_normalised_name() -> None:
    a, b, c = (
        Concept("person", "Marie Curie"),
        Concept("person", "marie  curie"),
        Concept("other", "Marie Curie"),
    )
    assert a.key == b.key
    assert a.key != c.key
    assert dedupe([a, b, c]) == (a, c)


def test_parse_plain_lines() -> None:
    text = "person: Marie Curie\nlocation: Warsaw\nconcept: radioactivity\n"
    got = parse_lines(text)
    assert [(c.type, c.name) for c in got] == [
        ("person", "Marie Curie"),
        ("location", "Warsaw"),
        (CONCEPT, "radioactivity"),
    ]


def test_parse_tolerates_bullets_numbering_prose_duplicates_and_synonyms() -> None:
    text = (
        "Here are the entities:\n\n"
        "- Person: Marie Curie\n"
        "2. ORG: University of Paris\n"
        "* person: marie curie\n"
        "• concepts: Nobel Prize, radioactivity\n"
        "Note that these are all.\n"
        "weird_label: ignored\n"
        "location:\n"
    )
    got = {(c.type, c.name) for c in parse_lines(text)}
    assert got == {
        ("person", "Marie Curie"),
        ("organization", "University of Paris"),
        (CONCEPT, "Nobel Prize"),
        (CONCEPT, "radioactivity"),
    }


def test_parse_drops_truncated_last_line_only_when_truncated() -> None:
    text = "person: Marie Curie\nlocation: Wars"
    assert [c.name for c in parse_lines(text, truncated=True)] == ["Marie Curie"]
    assert [c.name for c in parse_lines(text, truncated=False)] == ["Marie Curie", "Wars"]


def test_parse_keeps_dates_with_commas_whole() -> None:
    got = parse_lines("date: July 3, 2001")
    assert [c.name for c in got] == ["July 3, 2001"]


def test_parse_rejects_overlong_names() -> None:
    assert parse_lines("concept: " + "word " * 30) == ()


def test_parse_batch_sections_and_missing_section() -> None:
    text = "[1]\nperson: Ada Lovelace\n[3]\nlocation: London\nconcept: comput"
    got = parse_batch(text, 3, truncated=True)
    assert got[0] is not None and [c.name for c in got[0]] == ["Ada Lovelace"]
    assert got[1] is None
    assert got[2] is not None and [c.name for c in got[2]] == ["London"]


def test_compact_answers_type_codes_and_inline_section_headers() -> None:
    text = "[1] O: Radio City; All India Radio\nL: India\n[2]\nP: Marie Curie\nC: physicist\n"
    got = parse_batch(text, 2)
    assert got[0] is not None and [(c.type, c.name) for c in got[0]] == [
        ("organization", "Radio City"),
        ("organization", "All India Radio"),
        ("location", "India"),
    ]
    assert got[1] is not None and [c.type for c in got[1]] == ["person", "concept"]
    # "Passage 2 is ..." is prose, not a section header.
    assert parse_batch("[1]\nP: Ada\nPassage 2 is about her", 2)[1] is None


def test_compact_prompt_batches_numbered_texts() -> None:
    from terag_neo4j.core.documents import Passage
    from terag_neo4j.indexing.extraction import compact_messages

    msgs = compact_messages([Passage("a", "a", 0, "T1", "x."), Passage("b", "b", 0, "", "y.")])
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[-1].content == "[1] T1\nx.\n[2] y."
    assert parse_batch(msgs[2].content, 2)[1] is not None  # the example parses as two sections


def test_leading_article_is_not_part_of_the_name() -> None:
    assert normalize_name("The Beetle") == normalize_name("beetle") == "beetle"
    assert normalize_name("Theodor") == "theodor"


def test_grounding_drops_names_not_in_the_text() -> None:
    from terag_neo4j.core.concepts import grounded

    got = parse_lines("location: Detroit\norganization: Volkswagen\nconcept: beetle\nother: Wolf")
    kept = grounded(got, "Who makes the Beetle in Wolfsburg? Volkswagen!")
    assert [c.name for c in kept] == ["Volkswagen", "beetle"]  # whole words only: not "Wolf"


def test_lean_answers_one_numbered_line_of_untyped_names_per_passage() -> None:
    from terag_neo4j.indexing.extraction.reply_parser import UNTYPED, parse_numbered

    text = "1: Radio City; India; 3 July 2001\n2. Marie Curie; Polish\nNobel Prize; 1903\n"
    got = parse_numbered(text, 3)
    assert got[0] is not None and [c.name for c in got[0]] == ["Radio City", "India", "3 July 2001"]
    # A wrapped line continues its passage; a passage without a line is missing (None).
    assert got[1] is not None and [c.name for c in got[1]] == [
        "Marie Curie",
        "Polish",
        "Nobel Prize",
        "1903",
    ]
    assert got[2] is None
    assert {c.type for c in got[0]} == {UNTYPED}
    # A number the batch does not have starts made-up text: it and what follows are dropped.
    assert parse_numbered("1: Ada\n4: Bob\nCarl\n", 2) == [(Concept(UNTYPED, "Ada"),), None]
    # "[n]" headers and comma lists are read too.
    assert [c.name for c in parse_numbered("[1] Ada, Bob", 1)[0] or ()] == ["Ada", "Bob"]


def test_lean_truncated_answer_drops_only_the_half_written_name() -> None:
    from terag_neo4j.indexing.extraction.reply_parser import parse_numbered

    got = parse_numbered("1: Ada; Bob\n2: Carl; Dor", 2, truncated=True)
    assert [c.name for c in got[0] or ()] == ["Ada", "Bob"]
    assert [c.name for c in got[1] or ()] == ["Carl"]
    assert [c.name for c in parse_numbered("1: Carl; Dor", 1)[0] or ()] == ["Carl", "Dor"]


def test_lean_prompt_numbers_the_passages_and_its_example_parses() -> None:
    from terag_neo4j.core.documents import Passage
    from terag_neo4j.indexing.extraction.prompts import PASSAGE_PROMPTS

    spec = PASSAGE_PROMPTS["lean"]
    msgs = spec.messages([Passage("a", "a", 0, "T1", "x."), Passage("b", "b", 0, "", "y.")])
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[-1].content == "1. T1\nx.\n2. y."
    example = spec.parse(msgs[2].content, 2, False)
    assert all(example) and next(c.name for c in example[1] or ()) == "Marie Curie"
    assert len({s.version for s in PASSAGE_PROMPTS.values()}) == len(PASSAGE_PROMPTS)


def test_ollama_extractor_with_the_lean_prompt_on_a_fake_server() -> None:
    import json

    import httpx

    from terag_neo4j.config import Settings
    from terag_neo4j.core.documents import Passage
    from terag_neo4j.indexing.extraction import OllamaExtractor
    from terag_neo4j.llm import OllamaLLM

    sent: list[dict[str, object]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        answer = "1: Ada Lovelace; London\n2: Charles Babbage; Ada Lovelace\n"
        return httpx.Response(
            200,
            json={
                "model": "m",
                "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": answer},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 101,
                "eval_count": 21,
            },
        )

    llm = OllamaLLM(Settings(llm_model="m"), transport=httpx.MockTransport(reply))
    ex = OllamaExtractor(llm, batch_size=2, prompt="lean")
    assert ex.version == "terag-ner-lean-v1-batch2"
    passages = [
        Passage("a", "ha", 0, "Ada", "Ada Lovelace lived in London."),
        Passage("b", "hb", 0, "", "Charles Babbage worked with Ada Lovelace in Paris."),
    ]
    out = ex.extract(passages, "r")
    assert len(sent) == 1  # one call for the batch
    assert [c.name for c in out[0].concepts] == ["Ada Lovelace", "London"]
    assert [c.name for c in out[1].concepts] == ["Charles Babbage", "Ada Lovelace"]
    assert (out[0].input_tokens + out[1].input_tokens, out[0].output_tokens) == (101, 11)
