"""Prompts of the extraction stage: the few-shot texts, their versions (part of the cache key)
and the message lists sent for one passage, a batch of passages, or a query.

TERAG §4.1: answers are plain `type: name` lines, because output tokens are the cost that
matters and JSON spends them on punctuation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from terag_neo4j.core.concepts import TYPE_CODES, TYPES, Concept
from terag_neo4j.core.documents import Passage
from terag_neo4j.indexing.extraction.json_reply import (
    JSON_PROMPT_VERSION,
    as_json,
    parse_json,
    schema_for,
)
from terag_neo4j.indexing.extraction.reply_parser import parse_batch, parse_lines, parse_numbered
from terag_neo4j.llm import Format, Message

PROMPT_VERSION = "terag-ner-v2"

SYSTEM_PROMPT = (
    "Extract the named entities and the key concepts of the text. "
    "Answer one per line as `type: name`, types: " + ", ".join(TYPES) + ". "
    "Use the exact words of the text. No explanations."
)
_EXAMPLE_PASSAGE = (
    "Radio City\nRadio City is India's first private FM radio station and was started on "
    "3 July 2001. It plays Hindi, English and regional songs."
)
_EXAMPLE_ANSWER = (
    "organization: Radio City\nlocation: India\ndate: 3 July 2001\nother: Hindi\nother: English\n"
    "concept: private FM radio station\nconcept: regional songs"
)
_EXAMPLE_PASSAGE_2 = (
    "Marie Curie\nMarie Curie was a Polish physicist who won the Nobel Prize in Physics in 1903 "
    "for research on radioactivity."
)
_EXAMPLE_ANSWER_2 = (
    "person: Marie Curie\nother: Polish\nevent: Nobel Prize in Physics\ndate: 1903\n"
    "concept: physicist\nconcept: radioactivity"
)
QUERY_SYSTEM_PROMPT = (
    "Extract the named entities and key concepts of the question. "
    "Answer one per line as `type: name`, types: " + ", ".join(TYPES) + ". No explanations."
)
_QUERY_EXAMPLE = "Which country is the director of the film Titanic from?"
_QUERY_EXAMPLE_ANSWER = "work: Titanic\nconcept: director\nconcept: country"


def _text_turn(text: str, label: str = "Text:\n") -> str:
    # Framing each text with a cue to answer keeps small models extracting instead of echoing
    # the passage: on the sample corpus SmolLM2-135M went from 3 of 8 empty answers to none.
    return f"{label}{text}\n\nEntities and concepts:"


def passage_messages(passage: Passage) -> list[Message]:
    """Two worked examples, then the passage (prompt v2)."""
    return [
        Message("system", SYSTEM_PROMPT),
        Message("user", _text_turn(_EXAMPLE_PASSAGE)),
        Message("assistant", _EXAMPLE_ANSWER),
        Message("user", _text_turn(_EXAMPLE_PASSAGE_2)),
        Message("assistant", _EXAMPLE_ANSWER_2),
        Message("user", _text_turn(passage.content)),
    ]


def batch_messages(passages: Sequence[Passage]) -> list[Message]:
    """Several passages in one call: the instructions and example are paid for once."""
    body = "\n\n".join(f"[{i}]\n{p.content}" for i, p in enumerate(passages, 1))
    example = f"[1]\n{_EXAMPLE_PASSAGE}\n\n[2]\n{_EXAMPLE_PASSAGE_2}"
    example_answer = f"[1]\n{_EXAMPLE_ANSWER}\n[2]\n{_EXAMPLE_ANSWER_2}"
    return [
        Message("system", SYSTEM_PROMPT + " Answer each numbered text under its own [n] line."),
        Message("user", example),
        Message("assistant", example_answer),
        Message("user", body),
    ]


COMPACT_PROMPT_VERSION = "terag-ner-compact-v1"
COMPACT_SYSTEM_PROMPT = (
    "List the named entities of each numbered text in its exact words, under its [n] line, "
    "one line per type: `code: name; name`. Codes: "
    + ", ".join(f"{code.upper()} {name}" for code, name in TYPE_CODES.items())
    + " (at most two key concepts). No other words."
)
_COMPACT_EXAMPLE = (
    "[1] Radio City\nRadio City is India's first private FM radio station, started on "
    "3 July 2001.\n[2] Marie Curie\nMarie Curie was a Polish physicist who won the Nobel "
    "Prize in Physics in 1903."
)
_COMPACT_EXAMPLE_ANSWER = (
    "[1]\nO: Radio City\nL: India\nD: 3 July 2001\nC: FM radio station\n"
    "[2]\nP: Marie Curie\nX: Polish\nE: Nobel Prize in Physics\nD: 1903\nC: physicist"
)


def compact_messages(passages: Sequence[Passage]) -> list[Message]:
    """The token-lean prompt: one short two-text example, one-letter type codes, names of one
    type on one line; the same prompt for one passage or a batch (answered under `[n]` lines)."""
    body = "\n".join(f"[{i}] {p.content}" for i, p in enumerate(passages, 1))
    return [
        Message("system", COMPACT_SYSTEM_PROMPT),
        Message("user", _COMPACT_EXAMPLE),
        Message("assistant", _COMPACT_EXAMPLE_ANSWER),
        Message("user", body),
    ]


LEAN_PROMPT_VERSION = "terag-ner-lean-v1"
LEAN_SYSTEM_PROMPT = (
    "List the named entities of each numbered text in its exact words: "
    "one line `n: name; name` per text. No other words."
)
_LEAN_EXAMPLE = (
    "1. Radio City\nRadio City is India's first private FM radio station, started on "
    "3 July 2001.\n2. Marie Curie\nMarie Curie was a Polish physicist who won the Nobel "
    "Prize in Physics in 1903."
)
_LEAN_EXAMPLE_ANSWER = (
    "1: Radio City; India; 3 July 2001\n2: Marie Curie; Polish; Nobel Prize in Physics; 1903"
)


def lean_messages(passages: Sequence[Passage]) -> list[Message]:
    """The token-budget prompt: names without types or concepts, one answer line per numbered
    passage, so the output is names and separators only and the instructions are paid once per
    batch."""
    body = "\n".join(f"{i}. {p.content}" for i, p in enumerate(passages, 1))
    return [
        Message("system", LEAN_SYSTEM_PROMPT),
        Message("user", _LEAN_EXAMPLE),
        Message("assistant", _LEAN_EXAMPLE_ANSWER),
        Message("user", body),
    ]


JSON_SYSTEM_PROMPT = (
    "Extract the named entities and the key concepts of the text. "
    'Answer in JSON as {"concepts": [{"type": ..., "name": ...}]}, types: '
    + ", ".join(TYPES)
    + ". Use the exact words of the text. No explanations."
)


def json_messages(passages: Sequence[Passage]) -> list[Message]:
    """The v2 prompt's two worked examples, answered in JSON; a batch answers
    `{"texts": [...]}`, one entry per numbered text."""
    examples = [(_EXAMPLE_PASSAGE, _EXAMPLE_ANSWER), (_EXAMPLE_PASSAGE_2, _EXAMPLE_ANSWER_2)]
    if len(passages) == 1:
        turns: list[Message] = [Message("system", JSON_SYSTEM_PROMPT)]
        for text, answer in examples:
            turns += [Message("user", _text_turn(text)), Message("assistant", as_json(answer))]
        return [*turns, Message("user", _text_turn(passages[0].content))]
    body = "\n\n".join(f"[{i}]\n{p.content}" for i, p in enumerate(passages, 1))
    example = "\n\n".join(f"[{i}]\n{text}" for i, (text, _) in enumerate(examples, 1))
    texts = ", ".join(as_json(answer) for _, answer in examples)
    return [
        Message(
            "system",
            JSON_SYSTEM_PROMPT + ' Answer each numbered text in order as {"texts": [...]}.',
        ),
        Message("user", example),
        Message("assistant", f'{{"texts": [{texts}]}}'),
        Message("user", body),
    ]


ParsedBatch = list[tuple[Concept, ...] | None]
PromptName = Literal["v2", "compact", "lean", "json"]


def _free(passages: Sequence[Passage]) -> Format:
    return None


@dataclass(frozen=True)
class PassagePrompt:
    """One extraction prompt: its cache version, its messages for a group of passages, and the
    parser of its answer (one entry per passage, None where the answer skipped it)."""

    name: PromptName
    version: str
    messages: Callable[[Sequence[Passage]], list[Message]]
    parse: Callable[[str, int, bool], ParsedBatch]
    # The reply's structure the server is asked to hold to (a JSON schema), where it can;
    # None leaves the reply free
    format: Callable[[Sequence[Passage]], Format] = _free


def _v2_messages(passages: Sequence[Passage]) -> list[Message]:
    return passage_messages(passages[0]) if len(passages) == 1 else batch_messages(passages)


def _typed_parse(text: str, n: int, truncated: bool) -> ParsedBatch:
    return [parse_lines(text, truncated)] if n == 1 else parse_batch(text, n, truncated)


PASSAGE_PROMPTS: dict[str, PassagePrompt] = {
    "v2": PassagePrompt("v2", PROMPT_VERSION, _v2_messages, _typed_parse),
    "compact": PassagePrompt("compact", COMPACT_PROMPT_VERSION, compact_messages, _typed_parse),
    "lean": PassagePrompt("lean", LEAN_PROMPT_VERSION, lean_messages, parse_numbered),
    "json": PassagePrompt("json", JSON_PROMPT_VERSION, json_messages, parse_json, schema_for),
}


_QUERY_EXAMPLE_2 = "When was the founder of the Ford Motor Company born?"
_QUERY_EXAMPLE_ANSWER_2 = "organization: Ford Motor Company\nconcept: founder"


def query_messages(query: str) -> list[Message]:
    return [
        Message("system", QUERY_SYSTEM_PROMPT),
        Message("user", _text_turn(_QUERY_EXAMPLE, "Question: ")),
        Message("assistant", _QUERY_EXAMPLE_ANSWER),
        Message("user", _text_turn(_QUERY_EXAMPLE_2, "Question: ")),
        Message("assistant", _QUERY_EXAMPLE_ANSWER_2),
        Message("user", _text_turn(query, "Question: ")),
    ]
