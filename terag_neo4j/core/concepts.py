"""Concepts: the type vocabulary, a concept's identity (type + normalised name), the stop words
that link nothing, grounding in the text, title concepts, and `Extraction`, the typed result
every extraction backend returns."""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path

from terag_neo4j.errors import DependencyError

CONCEPT = "concept"
ENTITY_TYPES = ("person", "organization", "location", "date", "event", "work", "other")
TYPES = (*ENTITY_TYPES, CONCEPT)
_TYPE_SYNONYMS = {
    "per": "person",
    "people": "person",
    "persons": "person",
    "name": "person",
    "org": "organization",
    "organisation": "organization",
    "organizations": "organization",
    "company": "organization",
    "loc": "location",
    "place": "location",
    "gpe": "location",
    "country": "location",
    "city": "location",
    "time": "date",
    "year": "date",
    "misc": "other",
    "entity": "other",
    "entities": "other",
    "named entity": "other",
    "product": "other",
    "nationality": "other",
    "norp": "other",
    "work of art": "work",
    "film": "work",
    "book": "work",
    "song": "work",
    "album": "work",
    "concepts": CONCEPT,
    "topic": CONCEPT,
    "theme": CONCEPT,
    "keyword": CONCEPT,
}
# One-letter type codes of the compact prompt (output tokens are the cost that matters).
TYPE_CODES = {
    "p": "person",
    "o": "organization",
    "l": "location",
    "d": "date",
    "e": "event",
    "w": "work",
    "x": "other",
    "c": CONCEPT,
}
MAX_NAME_CHARS = 80
MAX_NAME_WORDS = 10


# --------------------------------------------------------------------------- normalisation

_NON_WORD = re.compile(r"[^\w]+")


def normalize_name(name: str) -> str:
    """The matching key of a name, shared by indexing and query matching.

    Case, accents, punctuation and spacing do not distinguish concepts ("Île-de-France" and
    "ile de france" are one); words and their order do.
    """
    if name.isascii():  # NFKD leaves ASCII as it is, and no ASCII character is combining
        stripped = name
    else:
        decomposed = unicodedata.normalize("NFKD", name)
        stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    norm = _NON_WORD.sub(" ", stripped.casefold()).replace("_", " ").strip()
    # A leading article is how a sentence refers to a name, not part of it ("the Beetle").
    return norm[4:] if norm.startswith("the ") else norm


def _s_stem(word: str) -> str:
    """Harman's S-stemmer: plural to singular, nothing else ("therapies" -> "therapy",
    "gliomas" -> "glioma", but "status", "glass" and "diabetes"-like "-aes/-ees/-oes" stay)."""
    if len(word) > 4 and word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def stem_key(norm: str) -> str:
    """A normalised name insensitive to inflection: names that differ only in plural endings
    share it, so a question saying "gliomas" links the concept "glioma" (and vice versa)."""
    return " ".join(_s_stem(w) for w in norm.split())


def normalize_type(raw: str) -> str | None:
    t = " ".join(raw.strip().casefold().replace("_", " ").split())
    if t in TYPES:
        return t
    if t.endswith("s") and t[:-1] in TYPES:
        return t[:-1]
    return _TYPE_SYNONYMS.get(t) or TYPE_CODES.get(t)


@cache
def stopwords() -> frozenset[str]:
    """spaCy's English stop words, read from its source file without importing spaCy (an
    import costs seconds, the list nothing)."""
    spec = importlib.util.find_spec("spacy")
    if spec is None or spec.origin is None:
        raise DependencyError("spaCy is not installed; `pip install spacy` (a dependency)")
    path = Path(spec.origin).parent / "lang" / "en" / "stop_words.py"
    scope: dict[str, object] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), scope)
    words = scope["STOP_WORDS"]
    assert isinstance(words, set)
    return frozenset(normalize_name(w) for w in words if normalize_name(w))


@dataclass(frozen=True)
class Concept:
    type: str
    name: str  # display name as first seen

    @cached_property  # read several times per concept on every write
    def norm(self) -> str:
        return normalize_name(self.name)

    @property
    def stem(self) -> str:
        return stem_key(self.norm)

    @property
    def key(self) -> str:
        """Strict identity (TERAG eq. 2): same type and same normalised name."""
        return f"{self.type}:{self.norm}"

    @property
    def is_entity(self) -> bool:
        return self.type != CONCEPT


def grounded(concepts: Iterable[Concept], text: str) -> tuple[Concept, ...]:
    """The concepts whose normalised name occurs in the normalised text, as whole words.

    Small models copy names from the few-shot examples or invent answers ("Detroit" for a
    question about the Beetle); an extracted name that is not in its text is such a leak.
    """
    haystack = f" {normalize_name(text)} "
    return tuple(c for c in concepts if f" {c.norm} " in haystack)


def dedupe(concepts: Iterable[Concept]) -> tuple[Concept, ...]:
    seen: dict[str, Concept] = {}
    for c in concepts:
        if c.norm and c.key not in seen:
            seen[c.key] = c
    return tuple(seen.values())


def make_concept(type_: str, name: str) -> Concept | None:
    name = " ".join(name.split()).strip("\"'`*").rstrip(".,;").strip()
    if not name or len(name) > MAX_NAME_CHARS or len(name.split()) > MAX_NAME_WORDS:
        return None
    c = Concept(type=type_, name=name)
    return c if c.norm else None


TITLE = "title"
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def title_concepts(title: str) -> tuple[Concept, ...]:
    """A passage's title as a concept, and without a trailing "(2017 film)" as a second one.

    A title names what the passage is about, so a question naming it should land on the passage
    whatever an extractor made of the text; no LLM tokens are spent on it.
    """
    names = [title, _DISAMBIGUATION.sub("", title)]
    return dedupe(c for n in names if (c := make_concept(TITLE, n)))


def with_title_concepts(extraction: Extraction, title: str) -> Extraction:
    if not title:
        return extraction
    return replace(extraction, concepts=dedupe((*extraction.concepts, *title_concepts(title))))


@dataclass(frozen=True)
class Extraction:
    passage_id: str
    passage_hash: str
    concepts: tuple[Concept, ...]
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False
    warnings: tuple[str, ...] = field(default_factory=tuple)
    # False: the LLM server sent no token counts; the 0s above are no measurement
    tokens_known: bool = True
