"""The structured (`json`) extraction prompt's parser and request, without an LLM: the replies
are literal strings, as a server would send them whole, cut, or ignoring the format."""

import json

from terag_neo4j.core.concepts import CONCEPT
from terag_neo4j.core.documents import Passage
from terag_neo4j.indexing.extraction.json_reply import (
    BATCH_SCHEMA,
    PASSAGE_SCHEMA,
    is_whole_json,
    parse_json,
)
from terag_neo4j.indexing.extraction.prompts import PASSAGE_PROMPTS


def _pairs(parsed: object) -> set[tuple[str, str]]:
    assert isinstance(parsed, tuple)
    return {(c.type, c.name) for c in parsed}


def _passage(i: int) -> Passage:
    return Passage(id=f"p{i}", doc_id="d", position=i, title="T", text=f"text {i}")


def test_a_whole_reply_gives_its_concepts_typed_deduped_and_normalised() -> None:
    reply = json.dumps(
        {
            "concepts": [
                {"type": "person", "name": "Marie Curie"},
                {"type": "Persons", "name": "marie curie"},
                {"type": "concept", "name": "radioactivity"},
                {"type": "nonsense", "name": "dropped"},
                {"type": "person"},
                "a string",
            ]
        }
    )
    [got] = parse_json(reply, 1)
    assert _pairs(got) == {("person", "Marie Curie"), (CONCEPT, "radioactivity")}
    assert is_whole_json(reply)


def test_a_cut_reply_keeps_its_complete_objects_only() -> None:
    reply = (
        '{"concepts": [{"type": "person", "name": "Marie Curie"}, '
        '{"type": "location", "name": "War\\"saw"}, {"type": "date", "name": "19'
    )
    [got] = parse_json(reply, 1, truncated=True)
    assert _pairs(got) == {("person", "Marie Curie"), ("location", 'War"saw')}
    assert not is_whole_json(reply)


def test_a_reply_in_lines_is_read_by_the_plain_text_parser() -> None:
    # a server that refused or ignored the format: the model answered as the v2 prompt does
    [got] = parse_json("person: Marie Curie\nconcept: radioactivity\n", 1)
    assert _pairs(got) == {("person", "Marie Curie"), (CONCEPT, "radioactivity")}


def test_a_batch_gives_each_text_its_entry_and_none_where_it_is_missing() -> None:
    reply = json.dumps(
        {
            "texts": [
                {"concepts": [{"type": "person", "name": "Ada Lovelace"}]},
                {"concepts": []},
            ]
        }
    )
    got = parse_json(reply, 3)
    assert _pairs(got[0]) == {("person", "Ada Lovelace")}
    assert got[1] == () and got[2] is None
    assert parse_json("texts: broken", 2) == [None, None]


def test_the_json_prompt_asks_the_server_for_its_schema_and_v2_for_nothing() -> None:
    spec = PASSAGE_PROMPTS["json"]
    assert spec.format([_passage(1)]) == PASSAGE_SCHEMA
    assert spec.format([_passage(1), _passage(2)]) == BATCH_SCHEMA
    assert PASSAGE_PROMPTS["v2"].format([_passage(1)]) is None
    # the worked examples answer in the JSON the schema describes
    answers = [m.content for m in spec.messages([_passage(1)]) if m.role == "assistant"]
    assert answers and all(parse_json(a, 1)[0] for a in answers)
    assert all(is_whole_json(a) for a in answers)
    batch = [m.content for m in spec.messages([_passage(1), _passage(2)]) if m.role == "assistant"]
    assert all(parse_json(a, 2)[1] for a in batch)


def test_a_long_hostile_reply_is_read_in_linear_time() -> None:
    reply = '{"type": "person", "name": "' + "\\" * 200_000
    [got] = parse_json(reply, 1, truncated=True)
    assert got == ()
