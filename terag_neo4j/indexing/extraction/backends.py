"""The interface every extraction backend implements, and the factory choosing one from
Settings. Backends share one interface so a graph can also be built with zero LLM tokens (spaCy),
and so a backend of another package (the bench's replayed LLM output) is handed to
`TeragClient(extractor=...)` as it stands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.indexing.documents import Passage
from terag_neo4j.indexing.extraction.concepts import Concept, Extraction
from terag_neo4j.indexing.extraction.ollama_extractor import OllamaExtractor
from terag_neo4j.indexing.extraction.spacy_extractor import SpacyExtractor
from terag_neo4j.llm import OllamaLLM


class Extractor(Protocol):
    name: str
    model: str
    version: str

    def extract(self, passages: Sequence[Passage], run_id: str) -> list[Extraction]: ...

    def extract_query(self, query: str, run_id: str) -> tuple[tuple[Concept, ...], int, int]: ...


def make_extractor(
    settings: Settings, llm: OllamaLLM | None = None, backend: str | None = None
) -> Extractor:
    backend = backend or settings.extractor
    if backend == "ollama":
        return OllamaExtractor(
            llm or OllamaLLM(settings),
            settings.extraction_batch,
            settings.extraction_grounded,
            settings.extraction_prompt,
        )
    if backend == "spacy":
        return SpacyExtractor(noun_chunks=settings.spacy_noun_chunks)
    raise SettingsError(f"unknown extractor {backend!r}; choose ollama or spacy")
