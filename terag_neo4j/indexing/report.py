"""What an ingest did: counts, the tokens it spent (and what cached extractions had cost), its
time per stage; stored as an `IngestRun` node and printed by `terag index`."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from terag_neo4j.core.concepts import Extraction

if TYPE_CHECKING:
    from terag_neo4j.core.documents import Document, Passage

# Lists kept out of the stored `IngestRun` record (a first ingest writes every document)
_NOT_RECORDED = ("warnings", "written_documents", "missing_documents")


@dataclass
class IngestReport:
    run_id: str
    namespace: str
    extractor: str
    model: str
    passages_total: int = 0
    passages_new: int = 0
    passages_unchanged: int = 0
    passages_replaced: int = 0
    passages_removed: int = 0  # old passages of changed documents that the new text no longer has
    passages_moved: int = 0  # unchanged text whose provenance (offsets, pages) was updated
    # Documents of this run: written (new, or changed: a passage written or removed) and
    # unchanged; files gone from an indexed folder, and the documents of them deleted (--prune)
    documents_total: int = 0
    documents_new: int = 0
    documents_changed: int = 0
    documents_unchanged: int = 0
    documents_deleted: int = 0
    written_documents: list[str] = field(default_factory=list)
    missing_documents: list[str] = field(default_factory=list)
    passages_without_concepts: int = 0
    extracted_fresh: int = 0
    extracted_cached: int = 0
    input_tokens: int = 0  # spent by this run (equals the LLM ledger)
    output_tokens: int = 0
    cached_input_tokens: int = 0  # what the extractions taken from the cache cost when made
    cached_output_tokens: int = 0
    # Extractions whose LLM server sent no token counts: the counts above leave them out
    tokens_unknown: int = 0
    concepts_touched: int = 0
    # Budget mode: β, the selection rule and merge, the core size it asks for, the core passages
    # chosen and merged by this run, and the core extractions paid now or taken from the cache
    llm_budget: float | None = None
    core_extractor: str = ""
    budget_selection: str = ""
    budget_merge: str = ""
    core_target: int = 0
    core_passages: int = 0
    core_selected: int = 0
    core_merged: int = 0
    core_extracted_fresh: int = 0
    core_extracted_cached: int = 0
    selection_s: float = 0.0
    core_s: float = 0.0
    has_passage: int = 0
    mention_links: int = 0  # passages linked to concepts they name beyond their extraction
    cooccurrence_rows: int = 0
    synonym_links: int = 0
    extraction_s: float = 0.0
    embedding_s: float = 0.0
    write_s: float = 0.0
    synonym_s: float = 0.0
    grounding_s: float = 0.0
    total_s: float = 0.0
    # CPU seconds of the thread that ran each stage (the embedder's inference workers and
    # Neo4j's are not in these: `terag bench-index` measures them beside)
    chunking_cpu_s: float = 0.0
    extraction_cpu_s: float = 0.0
    embedding_cpu_s: float = 0.0
    write_cpu_s: float = 0.0
    grounding_cpu_s: float = 0.0
    started: str = ""
    warnings: list[str] = field(default_factory=list)

    def charge(self, extractions: Sequence[Extraction]) -> tuple[int, int]:
        """Books the extractions' tokens (paid now, or what cached ones cost when made) and
        warnings; returns how many came from the cache and how many were made now."""
        cached = 0
        for e in extractions:
            if e.cached:
                self.cached_input_tokens += e.input_tokens
                self.cached_output_tokens += e.output_tokens
            else:
                self.input_tokens += e.input_tokens
                self.output_tokens += e.output_tokens
            cached += e.cached
            self.tokens_unknown += not e.tokens_known
            self.warnings.extend(e.warnings)
        return cached, len(extractions) - cached

    def count_documents(
        self,
        documents: Sequence[Document],
        passages: Sequence[Passage],
        written: Sequence[Passage],
        removed: dict[str, list[str]],
        present: Collection[str],
    ) -> None:
        """Documents new (none of their passages was there), changed (a passage written or
        removed) and unchanged, from this run's passages, those it writes (new or replaced),
        those it removes (by document) and the ids of those that were present."""
        touched = {p.doc_id for p in written} | set(removed)
        had = {p.doc_id for p in passages if p.id in present} | set(removed)
        ids = list(dict.fromkeys(d.id for d in documents))
        self.documents_total = len(ids)
        self.written_documents = [d for d in ids if d in touched]
        self.documents_new = sum(1 for d in self.written_documents if d not in had)
        self.documents_changed = len(self.written_documents) - self.documents_new
        self.documents_unchanged = self.documents_total - len(self.written_documents)

    @property
    def extracted(self) -> int:
        return self.extracted_fresh + self.extracted_cached

    @property
    def _per(self) -> int | None:
        """What the per-passage figures divide by; None where a count is unknown, so that no
        figure is a guess (an unknown extraction counted as 0 would lower the mean)."""
        if self.llm_budget is not None:
            # A budget's cost is per passage of the corpus: with a count missing it is unknown
            return None if self.tokens_unknown else self.passages_total
        # Otherwise the mean over the extractions whose counts the server sent
        return self.extracted - self.tokens_unknown

    @property
    def input_per_passage(self) -> float | None:
        """Extraction input tokens per passage, whether paid now or taken from the cache;
        None where no extraction's count is known."""
        per = self._per
        if not per:
            return None if per is None or self.tokens_unknown else 0.0
        return (self.input_tokens + self.cached_input_tokens) / per

    @property
    def output_per_passage(self) -> float | None:
        per = self._per
        if not per:
            return None if per is None or self.tokens_unknown else 0.0
        return (self.output_tokens + self.cached_output_tokens) / per

    @property
    def passages_per_s(self) -> float:
        return self.passages_new / self.total_s if self.total_s else 0.0

    def _per_passage(self) -> str:
        tin, tout = self.input_per_passage, self.output_per_passage
        if tin is None or tout is None:
            return "unknown per passage"
        known = " (over the extractions with known counts)" if self.tokens_unknown else ""
        return f"{tin:.1f} in / {tout:.1f} out per passage{known}"

    def _unknown_detail(self) -> str:
        if not self.tokens_unknown:
            return ""
        return (
            f"; token counts unknown for {self.tokens_unknown} extractions (the LLM server sent "
            "none; the counts leave them out)"
        )

    def to_record(self) -> dict[str, Any]:
        """Flat properties for the persisted `IngestRun` node."""
        rec = {k: v for k, v in asdict(self).items() if k not in _NOT_RECORDED}
        rec["warning_count"] = len(self.warnings)
        for key in ("input_per_passage", "output_per_passage"):
            value = getattr(self, key)
            rec[key] = None if value is None else round(value, 2)
        rec["passages_per_s"] = round(self.passages_per_s, 2)
        return rec

    def summary(self) -> str:
        budget = (
            ""
            if self.llm_budget is None
            else (
                f"\n  LLM budget {self.llm_budget:g}: {self.core_passages} of "
                f"{self.core_target} core passages chosen by {self.budget_selection} go through "
                f"{self.core_extractor} ({self.core_selected} chosen, {self.core_merged} merged "
                f"({self.budget_merge}) by this run; {self.core_extracted_fresh} extracted, "
                f"{self.core_extracted_cached} from cache); tokens per passage are over all "
                f"{self.passages_total} passages"
            )
        )
        return self._summary() + budget

    def _documents_detail(self) -> str:
        """Which documents changed (a few by name), which files are gone and what went."""
        out = ""
        if self.documents_changed and len(self.written_documents) <= 5:
            out += "; written: " + ", ".join(self.written_documents)
        if self.missing_documents:
            gone = ", ".join(self.missing_documents[:5])
            more = len(self.missing_documents) - 5
            gone += f" and {more} more" if more > 0 else ""
            out += (
                f"; deleted {self.documents_deleted} whose files are gone: {gone}"
                if self.documents_deleted
                else f"; files gone (--prune deletes their documents): {gone}"
            )
        return out

    def _summary(self) -> str:
        return (
            f"ingest {self.run_id} into {self.namespace!r} ({self.extractor}/{self.model}): "
            f"{self.passages_total} passages, {self.passages_new} written "
            f"({self.passages_replaced} replaced), {self.passages_unchanged} unchanged, "
            f"{self.passages_removed} removed, "
            f"{self.passages_without_concepts} without concepts\n"
            f"  documents: {self.documents_total} ({self.documents_new} new, "
            f"{self.documents_changed} changed, {self.documents_unchanged} unchanged)"
            f"{self._documents_detail()}\n"
            f"  tokens spent: {self.input_tokens} in / {self.output_tokens} out on "
            f"{self.extracted_fresh} extractions ({self.extracted_cached} more from cache, made for "
            f"{self.cached_input_tokens} in / {self.cached_output_tokens} out) = "
            f"{self._per_passage()}{self._unknown_detail()}\n"
            f"  time: {self.total_s:.1f}s (extract {self.extraction_s:.1f}s, embed "
            f"{self.embedding_s:.1f}s, write {self.write_s:.1f}s) = {self.passages_per_s:.1f} passages/s; "
            f"{self.has_passage} HAS_PASSAGE (+{self.mention_links} mentions, grounded in "
            f"{self.grounding_s:.1f}s), {self.cooccurrence_rows} CO_OCCURRENCE updates"
        )
