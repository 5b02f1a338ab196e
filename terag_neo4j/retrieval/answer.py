"""The reader: one prompt that turns a question and its passages into a short answer.

The reply is constrained to `READER_FORMAT`, a JSON object with the answer and the numbers of the
passages it comes from, through Ollama's structured outputs (`format`): the model cannot open with "The answer is:", list the passages or
run on into a second sentence. The prompt asks for words copied from the passages (extractive QA),
which keeps a small model on the passages' names instead of inventing one. With SmolLM2-135M on the
demo question (the sample corpus's top 5 passages): unconstrained, "The answer is: Ferdinand
Porsche. He was the designer of the Volkswagen Beetle."; constrained, "Ferdinand Porsche". Asked
with 6 variations of the system prompt and 10 shuffles of the passages, the earlier prompt ("the
answer only: a few words") named Ferdinand Porsche 3/6 and 4/10 times, this one 6/6 (once in a
sentence) and 8/10 (the other two: "Porsche"). docs/benchmarks.md (the reader) has the measurements.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Sequence
from typing import Any

from terag_neo4j import tracing
from terag_neo4j.core.results import Citation, RetrievedPassage
from terag_neo4j.llm import LLM, Completion, Message, Stage

READER_SYSTEM = (
    "Answer the question with words copied from the passages: the name, place, date or number "
    "that answers it, or yes or no. After the answer write the number of the passage it comes "
    "from in brackets, e.g. Paris [2]. Reply with the answer and its number only."
)
# EM/F1 expect a few words; the cap also stops a small model that rambles from costing minutes.
READER_MAX_TOKENS = 32
# Ollama structured output: the reply is {"answer": "...", "passages": [2]} and nothing else. A
# small model asked for inline markers wrote none (SmolLM2-135M: 0 of 8 sample questions); asked
# for the numbers as a field after the answer, it named one or more for all 8; an answer
# that runs into READER_MAX_TOKENS loses its numbers (the field never comes), which a small
# model's long answers do (1 of 4 PDF questions cited in tests/integration/
# test_provenance_answer.py). `reader_format` allows only the numbers of the passages given.
MAX_CITED = 3
READER_FORMAT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "passages": {
            "type": "array",
            "items": {"type": "integer"},
            "minItems": 1,
            "maxItems": MAX_CITED,
        },
    },
    "required": ["answer", "passages"],
}
_ANSWER_FIELD = re.compile(r'"answer"\s*:\s*"((?:[^"\\]|\\.)*)')
# A citation marker: [2], or several passages in one, [1, 3]
_MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_PASSAGES_FIELD = re.compile(r'"passages"\s*:\s*\[([\d,\s]*)')
_SPACE_BEFORE_STOP = re.compile(r"\s+([.,;:!?])")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


def reader_format(k: int) -> dict[str, Any]:
    """`READER_FORMAT` whose passage numbers are those of `k` passages."""
    items = {"type": "integer", "enum": list(range(1, max(k, 1) + 1))}
    cited = {**READER_FORMAT["properties"]["passages"], "items": items}
    return {**READER_FORMAT, "properties": {**READER_FORMAT["properties"], "passages": cited}}


def reader_messages(query: str, passages: Sequence[RetrievedPassage]) -> list[Message]:
    context = "\n\n".join(f"[{i}] {p.title}\n{p.text}" for i, p in enumerate(passages, 1))
    return [
        Message("system", READER_SYSTEM),
        Message("user", f"Passages:\n{context}\n\nQuestion: {query}\nAnswer:"),
    ]


def parse_answer(reply: str) -> str:
    """The answer in a reply to `READER_FORMAT`, on one line, with the markers of the passages
    it names. A reply cut off by the token cap keeps what it had; one that is no JSON at all (a
    server that ignores `format`) is taken as it is."""
    text = answer_value(reply)
    cited = cited_suffix(reply, text)
    return f"{text} {cited}" if text and cited else text


def answer_value(reply: str) -> str:
    """The `answer` value of a reply, on one line, without the markers `passages` adds."""
    text = reply.strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        m = _ANSWER_FIELD.search(text)
        if m:
            try:
                value = {"answer": json.loads(f'"{m.group(1)}"')}
            except json.JSONDecodeError:
                value = {"answer": m.group(1)}
        else:
            value = text
    if isinstance(value, dict):
        value = value.get("answer", "")
    return " ".join(str(value).split())


def cited_suffix(reply: str, answer: str) -> str:
    """The markers, `[1][3]`, of the numbers in the reply's `passages` field that the answer
    does not carry inline already ("" for none; a field cut off keeps the numbers it had)."""
    m = _PASSAGES_FIELD.search(reply)
    if m is None:
        return ""
    inline = {int(n) for g in _MARKER.findall(answer) for n in re.findall(r"\d+", g)}
    nums = [int(n) for n in re.findall(r"\d+", m.group(1))]
    return "".join(f"[{n}]" for n in dict.fromkeys(nums) if n not in inline)


def strip_markers(answer: str) -> str:
    """The answer without its citation markers (what EM/F1 compare)."""
    return _SPACE_BEFORE_STOP.sub(r"\1", " ".join(_MARKER.sub(" ", answer).split()))


def cite(answer: str, passages: Sequence[RetrievedPassage]) -> tuple[list[Citation], list[str]]:
    """The passages an answer's markers name (`[i]` is the i-th of `passages`, as the prompt
    numbered them), in order of first use, and its sentences that name none: a claim without a
    marker, or whose markers all point past the passages, is uncited."""
    citations: dict[int, Citation] = {}
    uncited: list[str] = []
    for sentence in _SENTENCE_END.split(answer.strip()):
        found = [
            int(n) for m in _MARKER.finditer(sentence) for n in re.split(r"\s*[,;]\s*", m.group(1))
        ]
        valid = [n for n in found if 1 <= n <= len(passages)]
        for n in valid:
            if n not in citations:
                p = passages[n - 1]
                citations[n] = Citation(n, p.id, p.doc_id, p.provenance)
        claim = strip_markers(sentence)
        if not valid and claim.strip(" .!?"):
            uncited.append(claim)
    return list(citations.values()), uncited


def read(
    llm: LLM, query: str, passages: Sequence[RetrievedPassage], run_id: str = "query"
) -> tuple[str, Completion]:
    """Answer `query` from `passages` with the reader LLM: the answer (one line) and the call,
    whose tokens are in the LLM's ledger under the answer stage."""
    with tracing.stage("reader"):
        comp = llm.complete(
            reader_messages(query, passages),
            stage=Stage.ANSWER,
            run_id=run_id,
            max_tokens=READER_MAX_TOKENS,
            format=reader_format(len(passages)),
        )
    return parse_answer(comp.text), comp


class AnswerStream:
    """The characters of the `answer` value of a `READER_FORMAT` reply, from its pieces as they
    arrive: what a streamed answer shows while the JSON around it is still being written."""

    _START = re.compile(r'"answer"\s*:\s*"')

    def __init__(self) -> None:
        self.raw = ""
        self._pos = -1  # where the value's characters start in `raw`; -1: not seen yet
        self._closed = False

    def feed(self, piece: str) -> str:
        """The value's characters that `piece` completes (escapes decoded)."""
        self.raw += piece
        if self._closed:
            return ""
        if self._pos < 0:
            m = self._START.search(self.raw)
            if m is None:
                return ""
            self._pos = m.end()
        out: list[str] = []
        i = self._pos
        while i < len(self.raw):
            ch = self.raw[i]
            if ch == '"':
                self._closed = True
                break
            if ch == "\\":
                # An escape is decoded whole: wait for its last character
                end = i + (6 if self.raw[i + 1 : i + 2] == "u" else 2)
                if end > len(self.raw):
                    break
                try:
                    out.append(json.loads(f'"{self.raw[i:end]}"'))
                except json.JSONDecodeError:
                    out.append(self.raw[i:end])
                i = end
                continue
            out.append(ch)
            i += 1
        self._pos = i
        return "".join(out)


def read_stream(
    llm: LLM, query: str, passages: Sequence[RetrievedPassage], run_id: str = "query"
) -> Generator[str, None, tuple[str, Completion]]:
    """`read`, streamed: yields the answer value's characters as the model writes them (then
    its citation markers) and returns what `read` returns. The answer is `parse_answer` of the whole reply, so it is the
    streamed characters with their whitespace collapsed (or, from a server that ignores
    `format`, the reply itself, of which nothing was streamed)."""
    parser = AnswerStream()
    comp = yield from _pieces(llm, query, passages, run_id, parser)
    value = answer_value(comp.text)
    cited = cited_suffix(comp.text, value)
    if value and cited:
        yield " " + cited  # the markers follow the answer's characters
    return parse_answer(comp.text), comp


def _pieces(
    llm: LLM,
    query: str,
    passages: Sequence[RetrievedPassage],
    run_id: str,
    parser: AnswerStream,
) -> Generator[str, None, Completion]:
    gen = llm.stream(
        reader_messages(query, passages),
        stage=Stage.ANSWER,
        run_id=run_id,
        max_tokens=READER_MAX_TOKENS,
        format=reader_format(len(passages)),
    )
    while True:
        try:
            piece = next(gen)
        except StopIteration as stop:
            comp: Completion = stop.value
            return comp
        text = parser.feed(piece)
        if text:
            yield text
