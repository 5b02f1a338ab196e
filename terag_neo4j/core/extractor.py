"""The interface every extraction backend implements: indexing extracts a passage's concepts
with it, retrieval a question's. It sits below both so neither pipeline imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from terag_neo4j.core.concepts import Concept, Extraction
from terag_neo4j.core.documents import Passage


class Extractor(Protocol):
    name: str
    model: str
    version: str

    def extract(self, passages: Sequence[Passage], run_id: str) -> list[Extraction]: ...

    def extract_query(
        self, query: str, run_id: str
    ) -> tuple[tuple[Concept, ...], int | None, int | None]: ...
