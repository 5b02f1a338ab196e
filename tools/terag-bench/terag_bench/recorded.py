"""Replaying extractions recorded from a real LLM (no LLM call here)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from terag_neo4j.core.concepts import Concept, Extraction, dedupe, make_concept
from terag_neo4j.core.documents import InputError, InputNotFound, Passage
from terag_neo4j.indexing.extraction.spacy_extractor import SpacyExtractor
from terag_neo4j.indexing.loading import jsonl_records

log = logging.getLogger(__name__)


class RecordedExtractor:
    """Extractions recorded from a real LLM (HippoRAG's gpt-3.5 NER), replayed with no LLM here.

    The recording has untyped named entities; they become type `other`. Query NER is not
    recorded, so queries fall back to spaCy. Each extraction carries what its reference prompt
    would have cost (`terag_bench.reference_tokens`: HippoRAG's NER prompt in cl100k_base).
    """

    name = "recorded"
    # v2: extractions carry the reference prompt's token counts (v1 had none)
    version = "recorded-v2"

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise InputNotFound(f"recorded extractions file not found: {path}")
        # Names become concepts when their passage is extracted: making all of a 1M-passage
        # recording's concepts up front took minutes, for every client that loaded it.
        self._by_id: dict[str, tuple[Concept, ...]] = {}
        self._raw: dict[str, list[str]] = {}
        models: set[str] = set()
        with path.open(encoding="utf-8") as f:
            for lineno, rec in jsonl_records(f, path):
                try:
                    ents = rec["named_entities"]
                    pid = str(rec["passage_id"])
                except KeyError as e:
                    raise InputError(f"{path}:{lineno}: not a recorded extraction ({e})") from e
                models.add(str(rec.get("model", "?")))
                self._raw[pid] = [str(e) for e in ents]
        self.model = "+".join(sorted(models)) or "?"
        self._path = path
        self._query_backend: SpacyExtractor | None = None

    def _concepts(self, pid: str) -> tuple[Concept, ...] | None:
        found = self._by_id.get(pid)
        if found is None and pid in self._raw:
            names = self._raw[pid]
            found = dedupe(c for e in names if (c := make_concept("other", e)))
            self._by_id[pid] = found
        return found

    def extract(self, passages: Sequence[Passage], run_id: str) -> list[Extraction]:
        from terag_bench.reference_tokens import (
            ner_answer_tokens,
            ner_prompt_tokens,
        )

        out = []
        for p in passages:
            concepts = self._concepts(p.id)
            warnings: tuple[str, ...] = ()
            if concepts is None:
                warnings = (f"passage {p.id!r} has no recorded extraction in {self._path.name}",)
                log.warning("%s", warnings[0])
                out.append(Extraction(p.id, p.hash, (), warnings=warnings))
                continue
            tin, tout = ner_prompt_tokens(p.content), ner_answer_tokens(self._raw[p.id])
            out.append(Extraction(p.id, p.hash, concepts, tin, tout))
        return out

    def extract_query(self, query: str, run_id: str) -> tuple[tuple[Concept, ...], int, int]:
        if self._query_backend is None:
            self._query_backend = SpacyExtractor()
        # Query NER was not recorded; matching compares normalised names, so spaCy's types do
        # not need to agree with the recording's `other`.
        return self._query_backend.extract_query(query, run_id)
