"""Indexing pipeline: documents -> passages -> extraction -> embeddings -> Neo4j.

Work goes in batches, each written in one transaction, so an interrupted ingest leaves a graph
that is consistent up to the last batch; the extraction cache keeps what was paid for after it,
and a rerun only does what is missing.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

from tqdm import tqdm

from terag_neo4j import tracing
from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.core.concepts import Extraction, with_title_concepts
from terag_neo4j.core.documents import (
    Document,
    IndexProgress,
    OnProgress,
    Passage,
    ShouldStop,
    stop_if_asked,
)
from terag_neo4j.core.extractor import Extractor
from terag_neo4j.embeddings import AnyEmbedder, Vectors, model_id
from terag_neo4j.indexing.batches import batch_fit, planned, warn_if_built_differently
from terag_neo4j.indexing.budget_phase import BudgetPhase
from terag_neo4j.indexing.extraction import ExtractionCache
from terag_neo4j.indexing.grounding import ground
from terag_neo4j.indexing.lease import held_lease
from terag_neo4j.indexing.loading import remove_stale, to_passages
from terag_neo4j.indexing.pacing import embed_in_steps, extract_in_steps
from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.indexing.stage_overlap import run_overlapped
from terag_neo4j.store import (
    GraphStore,
    GraphStoreError,
    Neo4jTransientError,
    Neo4jUnavailable,
    check_embedding_model,
    check_namespace,
    one_line,
)
from terag_neo4j.store.concept_vectors import ensure_concept_vectors
from terag_neo4j.store.passages import passage_provenance

log = logging.getLogger(__name__)
__all__ = ["Indexer", "IngestReport"]
# A batch's passage vectors, its concepts' (by key; empty unless eager), and their seconds
_Vecs = tuple[Vectors, dict[str, Sequence[float]], float]


class Indexer:
    def __init__(
        self,
        settings: Settings,
        store: GraphStore,
        extractor: Extractor,
        embedder: AnyEmbedder,
        cache: ExtractionCache,
        batch_passages: int = 512,
        core_extractor: Extractor | None = None,
    ) -> None:
        """`extractor` extracts every passage; with `settings.llm_budget` set it is the cheap
        one (spaCy) and `core_extractor` (the LLM) extracts the core passages only."""
        if settings.llm_budget is not None and core_extractor is None:
            raise SettingsError("an LLM budget needs a core extractor (the LLM)")
        self.settings = settings
        self.store = store
        self.extractor = extractor
        self.core_extractor = core_extractor if settings.llm_budget is not None else None
        self.embedder = embedder
        self.cache = cache
        self.batch_passages = batch_passages
        # The embedding model and its vector size, recorded on the namespace with each write
        self._embedding_meta: dict[str, Any] = {}
        self._should_stop: ShouldStop | None = None  # the running `index` call's
        self._on_progress: OnProgress | None = None  # the running `index` call's
        self._budget = (
            BudgetPhase(
                settings,
                store,
                extractor,
                self.core_extractor,
                cache,
                embedder,
                batch_passages,
                self._meta,
            )
            if self.core_extractor is not None
            else None
        )

    def _stop_if_asked(self, stage: str) -> None:
        stop_if_asked(self._should_stop, stage)

    def index(
        self,
        documents: Iterable[Document],
        namespace: str | None = None,
        progress: bool = True,
        should_stop: ShouldStop | None = None,
        on_progress: OnProgress | None = None,
    ) -> IngestReport:
        """Index `documents` into `namespace`. `should_stop` is asked while chunking, between
        extraction, embedding and write steps and between stages: when it says so the ingest
        raises `IngestCancelled`, leaving every batch written before it whole (indexing the same
        documents again resumes). `on_progress` is told the passages done once the documents
        are chunked and after each batch is written, so one large document shows progress."""
        ns = check_namespace(namespace or self.settings.namespace)
        self._should_stop = should_stop
        self._on_progress = on_progress
        try:
            # Every write of this ingest goes to the namespace as it found it: a drop meanwhile
            # fails the ingest instead of leaving a new, partial namespace behind.
            with self.store.writing(ns):
                return self._index(documents, ns, progress)
        finally:
            self._should_stop = None
            self._on_progress = None

    def _progress(self, done: int, total: int, document: str | None) -> None:
        if self._on_progress is not None:
            self._on_progress(IndexProgress(done, total, document))

    def _index(self, documents: Iterable[Document], ns: str, progress: bool) -> IngestReport:
        t0 = time.perf_counter()
        report = IngestReport(
            run_id=f"{ns}-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}",
            namespace=ns,
            extractor=self.extractor.name,
            model=self.extractor.model,
            started=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        if self.core_extractor is not None:
            report.llm_budget = self.settings.llm_budget
            report.core_extractor = f"{self.core_extractor.name}/{self.core_extractor.model}"
            report.budget_selection = self.settings.budget_selection
            report.budget_merge = self.settings.budget_merge
        self._check_embedding_model(ns)  # before the chunker loads its tokenizer
        documents = list(documents)
        cpu = time.thread_time()
        with tracing.stage("chunking"):
            passages = list(
                to_passages(
                    documents,
                    self.settings.chunk_tokens,
                    self.settings.chunk_overlap,
                    model=self._embedding_model(),  # the namespace's: a re-ingest chunks alike
                    should_stop=self._should_stop,
                )
            )
        report.chunking_cpu_s = time.thread_time() - cpu
        report.passages_total = len(passages)
        # Documents split into passages here: a changed one must lose the passages it no longer
        # has (it shrank, or one passage became several), not only have its current ones replaced.
        doc_ids = [d.id for d in documents if not d.is_passage]
        if not passages:
            report.warnings.append("no passages: every document was empty")
            log.warning("nothing to index into %r: every document was empty", ns)
            report.count_documents(
                documents, [], [], remove_stale(self.store, ns, doc_ids, passages, report), ()
            )
            return report
        self._stop_if_asked("preparing the namespace")
        self.store.ensure_schema()
        self.store.search_indexes.ensure(ns, dimensions=lambda: int(self.embedder.dimensions))
        warn_if_built_differently(
            self.store, ns, (self.extractor.name, self.extractor.model, self._graph_version())
        )
        stale = remove_stale(self.store, ns, doc_ids, passages, report)
        present = self.store.documents.present_passages(ns, [p.id for p in passages])
        todo = [p for p in passages if p.id not in present or present[p.id][0] != p.hash]
        report.passages_unchanged = len(passages) - len(todo)
        report.passages_replaced = sum(1 for p in todo if p.id in present)
        # Unchanged text in a new place (an edit above it moved its offsets or pages)
        moved = [
            p
            for p in passages
            if p.id in present
            and present[p.id][0] == p.hash
            and present[p.id][1] != passage_provenance(p)
        ]
        report.passages_moved = self.store.documents.set_provenance(ns, moved)
        report.count_documents(documents, passages, todo, stale, present)
        if todo:
            self._check_embedding_dimensions(ns)
        if report.passages_unchanged:
            log.info(
                "%d passages already indexed unchanged; skipping them", report.passages_unchanged
            )
        done = report.passages_unchanged
        self._progress(done, len(passages), todo[0].doc_id if todo else None)
        bar = tqdm(
            total=len(todo), desc=f"indexing {ns}", unit="passage", disable=not progress or not todo
        )
        lease = ExitStack()
        try:
            lease.enter_context(held_lease(self.store, ns, report.run_id))
            # Batches grow from a few passages and hold what `batch_fit` allows after the last
            # one's embedding and write took: passages done move every few seconds at any load
            fit = [self.batch_passages]

            def written(i: int, batch: list[Passage], ext: list[Extraction], v: _Vecs) -> None:
                nonlocal done
                t = time.perf_counter()
                self._write_batch(ns, batch, ext, v, report)
                fit[0] = batch_fit(len(batch), v[2] + time.perf_counter() - t, self.batch_passages)
                done += len(batch)
                k = done - report.passages_unchanged  # the next passage to write, in `todo`
                self._progress(
                    done, len(passages), (todo[k] if k < len(todo) else batch[-1]).doc_id
                )

            extract = lambda b: self._extract(b, report, bar)  # noqa: E731
            vectors = lambda b, x: self._vectors(b, x, report)  # noqa: E731
            run_overlapped(planned(todo, self.batch_passages, fit), extract, vectors, written)
            if self._budget is not None:
                self._stop_if_asked("choosing the core passages")
                self._budget.run(ns, report, progress)
            if self.settings.ground_mentions:
                cpu = time.thread_time()
                with tracing.stage("grounding"):
                    ground(self.store, ns, passages, report, progress, self._should_stop)
                report.grounding_cpu_s += time.thread_time() - cpu
        finally:
            bar.close()
            lease.close()
        self._stop_if_asked("finishing the namespace")
        if self.settings.cooccurrence == "eager":
            # A namespace made lazily gets its pairs now (a no-op once they are kept).
            t = time.perf_counter()
            with tracing.stage("cooccurrence"):
                built = self.store.cooccurrence.build(ns)
            if built is not None:
                report.cooccurrence_rows += built
                report.write_s += time.perf_counter() - t
        if self.settings.concept_vectors == "eager" and self.settings.synonym_threshold <= 0:
            # A namespace indexed lazily gets its concept embeddings now (a no-op once it has).
            t = time.perf_counter()
            ensure_concept_vectors(self.store, self.embedder, ns)
            report.write_s += time.perf_counter() - t
        if self.settings.synonym_threshold > 0:
            t = time.perf_counter()
            with tracing.stage("synonyms"):
                ensure_concept_vectors(self.store, self.embedder, ns)
                report.synonym_links = self.store.synonyms.link(
                    ns, self.settings.synonym_threshold, self.settings.synonym_cap
                )
            report.synonym_s = time.perf_counter() - t
        report.total_s = time.perf_counter() - t0
        self.store.namespaces.record_run(ns, report.to_record())
        log.debug("%s", report.summary())  # callers print or log it; the CLI prints it
        return report

    def _graph_version(self) -> str:
        """The extractor's version, marked when title concepts are added to what it finds."""
        return self.extractor.version + ("+titles" if self.settings.title_concepts else "")

    def _embedding_model(self) -> str:
        """The embedding model, as a namespace records it (`embeddings.model_id`)."""
        return model_id(getattr(self.embedder, "model_name", self.settings.embedding_model))

    def _check_embedding_model(self, ns: str) -> None:
        """Refuse to index into a namespace built with another embedding model."""
        rows = self.store.read("namespace_version", namespace=ns)
        check_embedding_model(
            ns, rows[0]["embedding_model"] if rows else None, self._embedding_model()
        )

    def _check_embedding_dimensions(self, ns: str) -> None:
        """Refuse a model whose vectors the namespace's vector index cannot hold (loads the
        model); the namespace records the model with its next write (`_meta`)."""
        model, dims = self._embedding_model(), int(self.embedder.dimensions)
        self.store.embedding_model.check_dimensions(ns, model, dims)
        inner = getattr(self.embedder, "embedder", self.embedder)
        self._embedding_meta = {
            "embedding_model": model,
            "embedding_dimensions": dims,
            "embedding_query_prefix": getattr(inner, "query_prefix", ""),
            "embedding_passage_prefix": getattr(inner, "passage_prefix", ""),
        }

    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "extractor": self.extractor.name,
            "model": self.extractor.model,
            "extractor_version": self._graph_version(),
            **self._embedding_meta,
        }
        if self.core_extractor is not None:
            meta |= {
                "llm_budget": self.settings.llm_budget,
                "core_extractor": self.core_extractor.name,
                "core_model": self.core_extractor.model,
                "core_extractor_version": self.core_extractor.version,
                "budget_selection": self.settings.budget_selection,
                "budget_merge": self.settings.budget_merge,
            }
        return meta

    def _extract(
        self, batch: Sequence[Passage], report: IngestReport, bar: tqdm[Any]
    ) -> list[Extraction]:
        t, cpu = time.perf_counter(), time.thread_time()
        # An LLM extracts a passage in seconds to minutes: cache after every round of calls, so
        # a killed ingest loses at most that round, not 64 passages of LLM time.
        llm = self.extractor.name == "ollama"
        with tracing.stage("extraction"):
            tracing.annotate({"terag.passages": len(batch)})
            extractions = extract_in_steps(
                self.extractor,
                batch,
                self.cache,
                report.run_id,
                bar,
                self.settings.extraction_batch * self.settings.llm_concurrency if llm else None,
                self._should_stop,
            )
        report.extraction_s += time.perf_counter() - t
        report.extraction_cpu_s += time.thread_time() - cpu
        cached, fresh = report.charge(extractions)
        report.extracted_cached += cached
        report.extracted_fresh += fresh
        report.passages_without_concepts += sum(not e.concepts for e in extractions)
        if self.settings.title_concepts:
            titles = {p.id: p.heading for p in batch}
            extractions = [with_title_concepts(e, titles[e.passage_id]) for e in extractions]
        return extractions

    def _vectors(
        self, batch: Sequence[Passage], extracted: Future[list[Extraction]], report: IngestReport
    ) -> _Vecs:
        """The batch's passage vectors and, with eager concept vectors, its concepts', and the
        seconds they took."""
        t, cpu, stop = time.perf_counter(), time.thread_time(), self._should_stop
        with tracing.stage("embedding"):
            tracing.annotate({"terag.passages": len(batch)})
            pvecs = embed_in_steps(self.embedder, [p.content for p in batch], stop)
            names = (
                {c.key: c.name for e in extracted.result() for c in e.concepts}
                if self.settings.concept_vectors == "eager"
                else {}
            )
            keys = sorted(names)
            vecs = embed_in_steps(self.embedder, [names[k] for k in keys], stop) if keys else None
        cvecs = dict(zip(keys, vecs.tolist(), strict=True)) if vecs is not None else {}
        took = time.perf_counter() - t
        report.embedding_s += took
        report.embedding_cpu_s += time.thread_time() - cpu
        return pvecs, cvecs, took

    def _write_batch(
        self,
        ns: str,
        batch: Sequence[Passage],
        extractions: Sequence[Extraction],
        vectors: _Vecs,
        report: IngestReport,
    ) -> None:
        pvecs, cvecs, _ = vectors
        self._stop_if_asked("writing passages")  # the last look before the batch's transaction

        t, cpu = time.perf_counter(), time.thread_time()
        try:
            with tracing.stage("write"):
                tracing.annotate({"terag.passages": len(batch)})
                stats = self.store.passages.write(
                    ns, batch, extractions, pvecs.tolist(), cvecs, self._meta()
                )
        except (Neo4jUnavailable, Neo4jTransientError) as e:
            # Passing failures: the same command, run again, finds the server able.
            raise type(e)(
                f"{e}. {report.passages_new} passages of this run were written and extractions "
                "are cached: rerunning the same command completes the graph without paying again"
            ) from e
        except GraphStoreError:
            raise
        except Exception as e:  # the query itself failed: a rerun would fail the same way
            code = getattr(e, "code", None) or type(e).__name__
            raise GraphStoreError(
                f"writing to Neo4j failed after {report.passages_new} passages of this run "
                f"({code}: {one_line(e)}); a rerun would fail the same way, so fix what the "
                "error names first (extractions are cached and are not paid for again)"
            ) from e
        report.write_s += time.perf_counter() - t
        report.write_cpu_s += time.thread_time() - cpu
        report.passages_new += stats.passages
        report.concepts_touched += stats.concepts_touched
        report.has_passage += stats.has_passage
        report.cooccurrence_rows += stats.cooccurrence_rows
