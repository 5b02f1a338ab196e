"""Entity linking without NER: the question's word n-grams looked up among concept names.

A question names what it is about ("Who directed Dark River (2017 Film)?"), and the graph already
holds every name worth finding, so the lookup needs neither an NER model nor an LLM call. Of the
n-grams that name a concept, the most specific win: a match inside a longer match is dropped
("dark river" inside "dark river 2017 film"), as are lone stopwords and spans written entirely in
lower case when the question capitalises names at all ("film", "place of birth" are phrasing,
not the subject).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from terag_neo4j.extraction import normalize_name

MAX_WORDS = 10
# Function words that are also someone's name somewhere ("The Who" -> "who", "It" the film).
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


@dataclass(frozen=True)
class Span:
    start: int  # word positions in the normalised question, end exclusive
    end: int
    norm: str  # normalised text, the key concepts are matched on
    capitalised: bool  # a word of it is capitalised or a number in the question as written

    def inside(self, other: Span) -> bool:
        return other.start <= self.start and self.end <= other.end and other != self


def _words(question: str) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    for raw in question.split():
        cap = any(ch.isupper() or ch.isdigit() for ch in raw)
        out.extend((w, cap) for w in normalize_name(raw).split())
    return out


def question_spans(question: str, max_words: int = MAX_WORDS) -> list[Span]:
    """Every n-gram of the question (up to `max_words` words), normalised as concept names are."""
    words = _words(question)
    spans: list[Span] = []
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + max_words) + 1):
            norm = normalize_name(" ".join(w for w, _ in words[i:j]))
            if norm:
                spans.append(Span(i, j, norm, any(c for _, c in words[i:j])))
    return spans


def select_links(question: str, spans: Iterable[Span], known: set[str]) -> list[Span]:
    """The most specific spans that name a known concept, in question order."""
    case_informative = any(ch.isupper() for ch in question)
    hits = [
        s
        for s in spans
        if s.norm in known
        and not (s.end - s.start == 1 and (s.norm in STOPWORDS or len(s.norm) < 3))
        and (s.capitalised or not case_informative)
    ]
    return sorted((s for s in hits if not any(s.inside(o) for o in hits)), key=_position)


def _position(s: Span) -> tuple[int, int]:
    return (s.start, s.end)


def span_norms(spans: Sequence[Span]) -> list[str]:
    return sorted({s.norm for s in spans})
