"""Few-shot LLM extraction (TERAG §4.1) through the LLM interface, whichever backend serves it:
one call per passage or per batch. (The backend is named `ollama` for the namespaces that
record it; the model it ran is recorded apart.)"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from terag_neo4j.config import SettingsError
from terag_neo4j.core.concepts import Concept, Extraction, grounded
from terag_neo4j.core.documents import Passage
from terag_neo4j.indexing.extraction.json_reply import is_whole_json
from terag_neo4j.indexing.extraction.prompts import PASSAGE_PROMPTS, PROMPT_VERSION, query_messages
from terag_neo4j.indexing.extraction.reply_parser import parse_lines
from terag_neo4j.llm import LLM, Completion, Stage

log = logging.getLogger(__name__)


class OllamaExtractor:
    """Few-shot extraction through the LLM layer; every call lands in its token ledger."""

    name = "ollama"
    version = PROMPT_VERSION

    def __init__(
        self, llm: LLM, batch_size: int = 1, grounded: bool = True, prompt: str = "v2"
    ) -> None:
        if prompt not in PASSAGE_PROMPTS:
            raise SettingsError(
                f"unknown extraction prompt {prompt!r}; choose {list(PASSAGE_PROMPTS)}"
            )
        self.llm = llm
        self.grounded = grounded
        self.model = llm.model
        self.prompt = PASSAGE_PROMPTS[prompt]
        self.batch_size = max(1, batch_size)
        # A batched prompt is a different prompt: its answers are cached apart.
        version = self.prompt.version
        self.version = version if self.batch_size == 1 else f"{version}-batch{self.batch_size}"
        # The cache stores what survived grounding, so grounding is part of the version.
        self.version += "" if grounded else "-ungrounded"

    def extract(self, passages: Sequence[Passage], run_id: str) -> list[Extraction]:
        groups = [
            list(passages[i : i + self.batch_size])
            for i in range(0, len(passages), self.batch_size)
        ]
        prompts = [self.prompt.messages(g) for g in groups]
        # The ledger counts passages per call: full batches go together, a short last one alone.
        full = len(groups) if len(groups[-1]) == self.batch_size else len(groups) - 1
        # The output cap is per passage: a batched answer may be as long as its passages' answers.
        cap = self.llm.settings.llm_max_tokens
        # Every full group has the same structure: one format for the map
        completions = self.llm.map(
            prompts[:full],
            stage=Stage.EXTRACTION,
            run_id=run_id,
            items_per_prompt=self.batch_size,
            max_tokens=cap * self.batch_size,
            format=self.prompt.format(groups[0]),
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
                    format=self.prompt.format(last),
                )
            )
        out: list[Extraction] = []
        for group, comp in zip(groups, completions, strict=True):
            out.extend(self._to_extractions(group, comp))
        return out

    def _to_extractions(self, group: list[Passage], comp: Completion) -> list[Extraction]:
        truncated = comp.cut
        n = len(group)
        parsed: list[tuple[Concept, ...] | None] = self.prompt.parse(comp.text, n, truncated)
        out = []
        # A structured reply that is not JSON: the server ignored the format or the cap cut it
        unstructured = self.prompt.format(group) is not None and not is_whole_json(comp.text)
        if self.grounded:
            parsed = [
                None if cs is None else grounded(cs, p.content)
                for p, cs in zip(group, parsed, strict=True)
            ]
        for i, (p, concepts) in enumerate(zip(group, parsed, strict=True)):
            # Tokens of a batched call are shared evenly; the remainder goes to the first passage
            # so the per-run totals still equal what the server reported.
            # A server that sent no counts: the extraction says unknown, not 0
            known = comp.input_tokens is not None and comp.output_tokens is not None
            cin, cout = comp.input_tokens or 0, comp.output_tokens or 0
            tin = cin // n + (cin % n if i == 0 else 0)
            tout = cout // n + (cout % n if i == 0 else 0)
            warnings: tuple[str, ...] = ()
            if not concepts:
                warnings = (f"passage {p.id!r}: the LLM answer gave no concepts",)
                log.warning("%s (answer: %r)", warnings[0], comp.text[:200])
            elif unstructured:
                warnings = (f"passage {p.id!r}: the LLM answer was not JSON, read leniently",)
                log.warning("%s (answer: %r)", warnings[0], comp.text[:200])
            out.append(
                Extraction(
                    p.id, p.hash, concepts or (), tin, tout, warnings=warnings, tokens_known=known
                )
            )
        return out

    def extract_query(
        self, query: str, run_id: str
    ) -> tuple[tuple[Concept, ...], int | None, int | None]:
        """The query's concepts and the call's tokens (None where the server sent none)."""
        comp = self.llm.complete(query_messages(query), stage=Stage.QUERY_NER, run_id=run_id)
        concepts = parse_lines(comp.text, comp.cut)
        if self.grounded:
            concepts = grounded(concepts, query)
        return concepts, comp.input_tokens, comp.output_tokens
