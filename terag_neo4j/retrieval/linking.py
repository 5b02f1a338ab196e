"""Entity linking without NER: the question's word n-grams looked up among concept names.

A question names what it is about ("Who directed Dark River (2017 Film)?", "How are gliomas
graded?"), and the graph already holds every name worth finding, so the lookup needs neither an
NER model nor an LLM call. A span links when its normalised text is a concept's name, or, failing
that, when it is one up to inflection ("gliomas" finds "glioma"). Of the spans that link, the
most specific win: a span inside a longer linked span is dropped ("dark river" inside "dark river
2017 film"), as are single stopwords. Case plays no part: domain text names its concepts in lower
case. Whether a link is trusted is the restart vector's business (`restart.py`): by how many
passages name the concept, and by how well those passages match the question.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from terag_neo4j.core.concepts import normalize_name, stem_key, stopwords

MAX_WORDS = 10


@dataclass(frozen=True)
class Span:
    start: int  # word positions in the normalised question, end exclusive
    end: int
    norm: str  # normalised text, the key concepts are matched on
    stem: str  # the same, insensitive to inflection

    def inside(self, other: Span) -> bool:
        return other.start <= self.start and self.end <= other.end and other != self

    @property
    def words(self) -> int:
        return self.end - self.start


def question_spans(question: str, max_words: int = MAX_WORDS) -> list[Span]:
    """Every n-gram of the question (up to `max_words` words), normalised as concept names are."""
    words = normalize_name(question).split()
    spans: list[Span] = []
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + max_words) + 1):
            norm = " ".join(words[i:j])
            spans.append(Span(i, j, norm, stem_key(norm)))
    return spans


def linkable(span: Span) -> bool:
    """A lone stopword or a one- or two-letter word names nothing worth walking from."""
    return not (span.words == 1 and (span.norm in stopwords() or len(span.norm) < 3))


def select_links(spans: Iterable[Span], names: set[str], stems: set[str]) -> list[Span]:
    """The most specific spans that name a known concept (by name, else by stem), in order."""
    hits = [s for s in spans if (s.norm in names or s.stem in stems) and linkable(s)]
    return sorted((s for s in hits if not any(s.inside(o) for o in hits)), key=_position)


def _position(s: Span) -> tuple[int, int]:
    return (s.start, s.end)


def span_keys(spans: Sequence[Span]) -> tuple[list[str], list[str]]:
    """The distinct names and stems to look up for these spans."""
    return sorted({s.norm for s in spans if linkable(s)}), sorted(
        {s.stem for s in spans if linkable(s)}
    )
