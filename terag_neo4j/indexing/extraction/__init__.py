"""Extraction stage: passages -> concepts (named entities and document-level concepts).

TERAG §4.1: one few-shot LLM call per passage (or per batch of passages) answered as plain
`type: name` lines. One module per concern: `prompts`, `reply_parser`, `cache`, the backends
(`ollama_extractor`, `spacy_extractor`) and `backends` (their factory). Their types (`Concept`,
`Extraction`, the `Extractor` interface) are on the ground floor (`core.concepts`,
`core.extractor`), shared with retrieval; the public names are re-exported here.
"""

from terag_neo4j.core.concepts import (
    CONCEPT,
    ENTITY_TYPES,
    MAX_NAME_CHARS,
    MAX_NAME_WORDS,
    TITLE,
    TYPE_CODES,
    TYPES,
    Concept,
    Extraction,
    dedupe,
    grounded,
    make_concept,
    normalize_name,
    normalize_type,
    stem_key,
    title_concepts,
    with_title_concepts,
)
from terag_neo4j.core.extractor import Extractor
from terag_neo4j.indexing.extraction.backends import make_extractor
from terag_neo4j.indexing.extraction.cache import ExtractionCache, extract_with_cache
from terag_neo4j.indexing.extraction.ollama_extractor import OllamaExtractor
from terag_neo4j.indexing.extraction.prompts import (
    COMPACT_PROMPT_VERSION,
    COMPACT_SYSTEM_PROMPT,
    PROMPT_VERSION,
    QUERY_SYSTEM_PROMPT,
    SYSTEM_PROMPT,
    batch_messages,
    compact_messages,
    passage_messages,
    query_messages,
)
from terag_neo4j.indexing.extraction.reply_parser import parse_batch, parse_lines
from terag_neo4j.indexing.extraction.spacy_extractor import SpacyExtractor

__all__ = [
    "COMPACT_PROMPT_VERSION",
    "COMPACT_SYSTEM_PROMPT",
    "CONCEPT",
    "ENTITY_TYPES",
    "MAX_NAME_CHARS",
    "MAX_NAME_WORDS",
    "PROMPT_VERSION",
    "QUERY_SYSTEM_PROMPT",
    "SYSTEM_PROMPT",
    "TITLE",
    "TYPES",
    "TYPE_CODES",
    "Concept",
    "Extraction",
    "ExtractionCache",
    "Extractor",
    "OllamaExtractor",
    "SpacyExtractor",
    "batch_messages",
    "compact_messages",
    "dedupe",
    "extract_with_cache",
    "grounded",
    "make_concept",
    "make_extractor",
    "normalize_name",
    "normalize_type",
    "parse_batch",
    "parse_lines",
    "passage_messages",
    "query_messages",
    "stem_key",
    "title_concepts",
    "with_title_concepts",
]
