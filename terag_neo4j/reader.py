"""The reader: one prompt that turns a question and its passages into a short answer."""

from __future__ import annotations

from collections.abc import Sequence

from terag_neo4j.llm import Message
from terag_neo4j.results import RetrievedPassage

READER_SYSTEM = (
    "Answer the question from the passages. Reply with the answer only: a few words, no sentence."
)
# EM/F1 expect a few words; the cap also stops a small model that rambles from costing minutes.
READER_MAX_TOKENS = 32


def reader_messages(query: str, passages: Sequence[RetrievedPassage]) -> list[Message]:
    context = "\n\n".join(f"[{i}] {p.title}\n{p.text}" for i, p in enumerate(passages, 1))
    return [
        Message("system", READER_SYSTEM),
        Message("user", f"Passages:\n{context}\n\nQuestion: {query}\nAnswer:"),
    ]
