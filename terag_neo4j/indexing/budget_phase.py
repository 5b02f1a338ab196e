"""The budget phase of an ingest: after the cheap extractor has indexed every passage, choose
the core passages (once, stored on them) and give each its LLM concepts, merged into the graph
(`budget` has the selection rules and the merge)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from tqdm import tqdm

from terag_neo4j.config import Settings
from terag_neo4j.core.concepts import with_title_concepts
from terag_neo4j.core.documents import Passage
from terag_neo4j.core.extractor import Extractor
from terag_neo4j.embeddings import AnyEmbedder
from terag_neo4j.indexing.budget import choose, core_target, merge_concepts, passage_scores
from terag_neo4j.indexing.extraction import ExtractionCache, extract_with_cache
from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.store import GraphStore

log = logging.getLogger(__name__)


class BudgetPhase:
    """The `Indexer`'s second phase in budget mode; `meta` is what each write records on the
    namespace (the indexer's, read at the write)."""

    def __init__(
        self,
        settings: Settings,
        store: GraphStore,
        extractor: Extractor,
        core_extractor: Extractor,
        cache: ExtractionCache,
        embedder: AnyEmbedder,
        batch_passages: int,
        meta: Callable[[], dict[str, Any]],
    ) -> None:
        self.settings = settings
        self.store = store
        self.extractor = extractor
        self.core_extractor = core_extractor
        self.cache = cache
        self.embedder = embedder
        self.batch_passages = batch_passages
        self._meta = meta

    def run(self, ns: str, report: IngestReport, progress: bool) -> None:
        """Choose the core passages (once, stored), then give each its LLM concepts."""
        assert self.settings.llm_budget is not None
        t = time.perf_counter()
        total, core = self.store.budget.core_state(ns)
        report.core_target = core_target(self.settings.llm_budget, total)
        if len(core) < report.core_target:
            scores = passage_scores(self.store, self.settings, ns, self.settings.budget_selection)
            chosen = choose(scores, core, report.core_target)
            self.store.budget.mark_core(ns, chosen)
            report.core_selected = len(chosen)
            log.info(
                "LLM budget %g: %d more core passages by %s (%d of %d now)",
                self.settings.llm_budget,
                len(chosen),
                self.settings.budget_selection,
                len(core) + len(chosen),
                total,
            )
        elif len(core) > report.core_target:
            log.warning(
                "namespace %r has %d core passages, more than the budget %g buys (%d): core "
                "passages keep their LLM concepts; drop the namespace to rebuild with less",
                ns,
                len(core),
                self.settings.llm_budget,
                report.core_target,
            )
        report.core_passages = len(core) + report.core_selected
        report.selection_s = time.perf_counter() - t
        t = time.perf_counter()
        pending = self.store.budget.core_pending(ns)
        bar = tqdm(
            total=len(pending),
            desc=f"LLM on core passages of {ns}",
            unit="passage",
            disable=not progress or not pending,
        )
        try:
            for i in range(0, len(pending), self.batch_passages):
                self._core_batch(ns, pending[i : i + self.batch_passages], report, bar)
        finally:
            bar.close()
        report.core_s = time.perf_counter() - t

    def _core_batch(
        self, ns: str, batch: Sequence[Passage], report: IngestReport, bar: tqdm[Any]
    ) -> None:
        t = time.perf_counter()
        llm = extract_with_cache(
            self.core_extractor, batch, self.cache, report.run_id, progress=bar
        )
        # The cheap extraction of these passages was made (and cached) by the first phase.
        base = {
            e.passage_id: e
            for e in extract_with_cache(self.extractor, batch, self.cache, report.run_id)
        }
        report.extraction_s += time.perf_counter() - t
        cached, fresh = report.charge(llm)
        report.core_extracted_cached += cached
        report.core_extracted_fresh += fresh
        known = self.store.budget.concept_types(ns, [c.norm for e in llm for c in e.concepts])
        merged = [
            replace(
                e,
                concepts=merge_concepts(
                    base[e.passage_id].concepts, e.concepts, self.settings.budget_merge, known
                ),
            )
            for e in llm
        ]
        if self.settings.title_concepts:
            titles = {p.id: p.heading for p in batch}
            merged = [with_title_concepts(e, titles[e.passage_id]) for e in merged]
        t = time.perf_counter()
        names = (
            {c.key: c.name for e in merged for c in e.concepts}
            if self.settings.concept_vectors == "eager"
            else {}
        )
        keys = sorted(names)
        vectors = (
            dict(zip(keys, self.embedder.embed([names[k] for k in keys]).tolist(), strict=True))
            if keys
            else {}
        )
        report.embedding_s += time.perf_counter() - t
        t = time.perf_counter()
        stats = self.store.passages.replace(ns, batch, merged, vectors, self._meta())
        report.write_s += time.perf_counter() - t
        report.core_merged += stats.passages
