"""The factory choosing an extraction backend from Settings. Backends share one interface
(`core.extractor.Extractor`) so a graph can also be built with zero LLM tokens (spaCy), and so a
backend of another package (the bench's replayed LLM output) is handed to
`TeragClient(extractor=...)` as it stands."""

from __future__ import annotations

from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.core.extractor import Extractor
from terag_neo4j.indexing.extraction.ollama_extractor import OllamaExtractor
from terag_neo4j.indexing.extraction.spacy_extractor import SpacyExtractor
from terag_neo4j.llm import LLM, make_llm


def make_extractor(
    settings: Settings, llm: LLM | None = None, backend: str | None = None
) -> Extractor:
    backend = backend or settings.extractor
    if backend == "ollama":
        return OllamaExtractor(
            llm or make_llm(settings),
            settings.extraction_batch,
            settings.extraction_grounded,
            settings.extraction_prompt,
        )
    if backend == "spacy":
        return SpacyExtractor(noun_chunks=settings.spacy_noun_chunks)
    raise SettingsError(f"unknown extractor {backend!r}; choose ollama or spacy")
