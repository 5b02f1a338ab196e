"""`terag bench`: retrieval quality, tokens and latency of TERAG and its baselines on one dataset.

One run indexes the dataset into a namespace per extractor backend (re-used when already
indexed: indexing is idempotent and the extraction/embedding caches make re-runs cheap), then
asks every question of every method (`variants.py`) over the same passages. A dataset with gold
passages is scored by Recall@2/@5; one with reference answers only (a corpus of text files) by
answer coverage@5 and hit@5 (`metrics.py`), per question type too, with the share of questions
that link at least one concept.
"""

from __future__ import annotations

import logging
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from terag_bench.baselines import BM25Baseline, DenseBaseline
from terag_bench.datasets import Dataset, DatasetError, namespace_for
from terag_bench.runs import KS, TOP_K, MethodRun, QuestionRun, Scorer, run_simple
from terag_bench.token_figures import per, total
from terag_bench.variants import (
    DEFAULT_KNOBS,
    DEFAULT_METHODS,
    INDEX_VARIANTS,
    METHOD_CHOICES,
    MODES,
    PAPER_KNOBS,
    TERAG_VARIANTS,
    knobs,
)
from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.indexing.loading import Document, to_passages
from terag_neo4j.store import gds

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
__all__ = ["DEFAULT_METHODS", "METHOD_CHOICES", "BenchConfig", "BenchRunner", "run_bench"]


@dataclass
class BenchConfig:
    extractors: list[str] = field(default_factory=lambda: ["spacy"])
    methods: list[str] = field(default_factory=lambda: list(DEFAULT_METHODS))
    answers: bool = False
    answer_methods: list[str] | None = None  # default: the first TERAG method
    answer_budget_s: float | None = None  # stop starting reader questions after this long
    fresh: bool = False  # drop the bench namespaces first (measures indexing from scratch)
    namespace_prefix: str = "bench"
    progress: bool = True


def _safe_settings(settings: Settings) -> dict[str, Any]:
    data = settings.model_dump(mode="json")
    data.pop("neo4j_password", None)
    return data


class BenchRunner:
    def __init__(self, settings: Settings, dataset: Dataset, config: BenchConfig) -> None:
        unknown = sorted(set(config.methods) - set(METHOD_CHOICES))
        if unknown:
            raise SettingsError(f"unknown methods {unknown}; choose from {list(METHOD_CHOICES)}")
        if not dataset.questions:
            raise DatasetError(f"{dataset.name}: no questions selected")
        self.settings = settings.with_overrides(
            preset="default", retrieval=DEFAULT_KNOBS, top_k=TOP_K
        )
        self.dataset = dataset
        self.config = config
        # The passages every method ranks: the corpus records, or the text files' chunks.
        self.passages = list(
            to_passages(dataset.documents, self.settings.chunk_tokens, self.settings.chunk_overlap)
        )
        self.docs_by_id: dict[str, Document] = {
            p.id: Document(p.id, p.text, p.title, is_passage=True) for p in self.passages
        }
        self.score = Scorer(dataset, self.passages)
        self.methods: dict[str, MethodRun] = {}
        self.indexing: dict[str, dict[str, Any]] = {}
        self.answers: dict[str, Any] = {}
        self.timings: dict[str, float] = {}
        self.notes: list[str] = []

    # ------------------------------------------------------------------ baselines

    def run_baselines(self) -> None:
        qs = self.dataset.questions
        if "bm25" in self.config.methods:
            t = time.perf_counter()
            bm25 = BM25Baseline(list(self.docs_by_id.values()))
            self.timings["bm25_index_s"] = time.perf_counter() - t
            self.methods["bm25"] = run_simple("bm25", "bm25", qs, bm25.retrieve, self.score)
            log.info("bm25: %s", self.methods["bm25"].scores())
        if "dense" in self.config.methods:
            from terag_neo4j.embeddings import CachedEmbedder, settings_embedder

            embedder = CachedEmbedder(
                settings_embedder(self.settings.embedding_model, self.settings),
                self.settings.home / "embeddings.sqlite3",
            )
            try:
                t = time.perf_counter()
                dense = DenseBaseline(list(self.docs_by_id.values()), embedder)
                self.timings["dense_index_s"] = time.perf_counter() - t
                self.methods["dense"] = run_simple("dense", "dense", qs, dense.retrieve, self.score)
            finally:
                embedder.close()
            log.info("dense: %s", self.methods["dense"].scores())

    # ------------------------------------------------------------------ TERAG

    def _client_overrides(self, extractor: str) -> dict[str, Any]:
        return {"extractor": self.dataset.extractor(extractor)}

    def _namespaces(self, extractor: str) -> list[tuple[str, str, dict[str, Any], str | None]]:
        """(result key, namespace, index settings, the only variant run on it) per graph."""
        ns = namespace_for(self.dataset, extractor, self.config.namespace_prefix)
        graphs: list[tuple[str, str, dict[str, Any], str | None]] = [(extractor, ns, {}, None)]
        for variant, index_settings in INDEX_VARIANTS.items():
            if variant in self.config.methods:
                graphs.append(
                    (f"{extractor}/{variant}", f"{ns}_{variant}"[:64], index_settings, variant)
                )
        return graphs

    def _client(self, ns: str, extractor: str, index_settings: dict[str, Any]) -> Any:
        from terag_neo4j.client import TeragClient

        return TeragClient(
            self.settings, namespace=ns, **self._client_overrides(extractor), **index_settings
        )

    def index_extractor(self, extractor: str) -> None:
        """Index every graph of this extractor before any is queried: Lucene's BM25 statistics
        span the database, so a graph indexed between two methods' runs would change the
        full-text seeds of the second."""
        from terag_neo4j.store import NamespaceNotFound

        for key, ns, index_settings, _only in self._namespaces(extractor):
            with self._client(ns, extractor, index_settings) as client:
                if extractor == "ollama":
                    client.llm.check_model()  # fail before hours of work, not during
                if self.config.fresh:
                    try:
                        client.drop(ns)
                        log.info("dropped %s to index from scratch", ns)
                    except NamespaceNotFound:
                        pass
                self.indexing[key] = self._index(client, ns)

    def run_extractor(self, extractor: str) -> None:
        """The TERAG rows on each graph of this extractor: every TERAG variant on the main one,
        and on an index variant's graph that variant alone."""
        for key, ns, index_settings, only in self._namespaces(extractor):
            tokens = (self.indexing[key]["tokens"]["input"], self.indexing[key]["tokens"]["output"])
            variants = [only] if only else [v for v in TERAG_VARIANTS if v in self.config.methods]
            with self._client(ns, extractor, index_settings) as client:
                for variant in variants:
                    name = (
                        f"terag-{extractor}"
                        if variant == "terag"
                        else f"terag-{extractor}/{variant}"
                    )
                    run = self._run_terag(client, ns, name, extractor, variant)
                    self.methods[name] = run
                    summ = run.summary(tokens)
                    log.info(
                        "%s: %s, p50 %.0f ms, %d fallbacks, linked %s",
                        name,
                        summ["scores"],
                        summ["latency_ms"]["p50"],
                        summ["fallbacks"],
                        summ["linked_share"],
                    )

    def _index(self, client: Any, ns: str) -> dict[str, Any]:
        t = time.perf_counter()
        report = client.index(self.dataset.documents, namespace=ns, progress=self.config.progress)
        wall = time.perf_counter() - t
        info = client.stats(ns)
        if info.passages != len(self.passages):
            note = (
                f"namespace {ns} holds {info.passages} passages, the corpus {len(self.passages)}"
                " (drop it or run with --fresh)"
            )
            log.warning("%s", note)
            self.notes.append(note)
        # What this graph's extractions cost, whichever run paid for them: the cache keeps the
        # server-reported counts (a re-run's own report only counts what it extracted afresh).
        passages = self.passages
        ext = client.extractor
        keys = [client.cache.key(p.hash, ext.name, ext.model, ext.version) for p in passages]
        hits = client.cache.get_many(keys)
        tin = total(v[1] for v in hits.values())
        tout = total(v[2] for v in hits.values())
        n = len(passages)
        if report.passages_new == report.passages_total and report.total_s > 0:
            throughput, source = report.passages_per_s, f"this run ({report.run_id})"
            index_s = report.total_s
        else:
            full = [r for r in info.runs if int(r.get("passages_new") or 0) > 0]
            best = max(full, key=lambda r: int(r.get("passages_new") or 0), default=None)
            throughput = float(best.get("passages_per_s") or 0.0) if best else 0.0
            index_s = float(best.get("total_s") or 0.0) if best else 0.0
            source = f"earlier run {best.get('run_id')}" if best else "unknown"
        return {
            "namespace": ns,
            "extractor": ext.name,
            "model": ext.model,
            "passages": info.passages,
            "concepts": info.concepts,
            "entities": info.entities,
            "has_passage": info.has_passage,
            "co_occurrence": info.co_occurrence,
            "tokens": {
                "input": tin,
                "output": tout,
                "input_per_passage": per(tin, n),
                "output_per_passage": per(tout, n),
                "cached_extractions": len(hits),
                "source": "extraction cache (server-reported counts of the run that paid)",
            },
            "this_run": {**report.to_record(), "wall_s": round(wall, 3)},
            "throughput_passages_per_s": round(throughput, 3),
            "index_s": round(index_s, 3),
            "throughput_source": source,
            "namespace_runs": len(info.runs),
        }

    def _run_terag(
        self, client: Any, ns: str, name: str, extractor: str, variant: str
    ) -> MethodRun:
        from terag_neo4j.retrieval.retriever import Retriever

        pinned = knobs(variant)
        settings = client.settings.with_overrides(retrieval=pinned)
        base = client.retriever
        retriever = Retriever(
            settings,
            client.store,
            base.extractor,
            client.embedder,
            base.llm,
            extractor_for=base.extractor_for,
            embedders=base.embedders,
        )
        overrides = {k: v for k, v in pinned.items() if DEFAULT_KNOBS.get(k) != v}
        run = MethodRun(name, "terag", extractor, variant, overrides, ns)
        t = time.perf_counter()
        retriever.check_gds()
        info = client.stats(ns)
        graph = (
            retriever.ensure_projection(ns) if retriever.scope(info.passages) == "global" else ""
        )
        run.projection_s = time.perf_counter() - t  # once, outside the per-query latencies
        stage_sums: dict[str, float] = {}
        for q in self.dataset.questions:
            t = time.perf_counter()
            res = retriever.retrieve(
                q.question,
                top_k=TOP_K,
                namespace=ns,
                run_id=f"bench-{name}",
                mode=MODES.get(variant),
            )
            ms = (time.perf_counter() - t) * 1000
            ids = [p.id for p in res.passages]
            for stage, sec in res.timings.items():
                stage_sums[stage] = stage_sums.get(stage, 0.0) + sec * 1000
            run.questions.append(
                QuestionRun(
                    q.id,
                    ids,
                    self.score(ids, q),
                    ms,
                    # None: query NER through a server without counts (shown as unknown)
                    res.input_tokens,
                    res.output_tokens,
                    res.fallback_reason,
                    list(res.entities),
                    q.type,
                    bool(res.matches),
                )
            )
        n = len(self.dataset.questions)
        run.stage_ms = {k: v / n for k, v in stage_sums.items()}
        if graph and retriever.projection_spec().code != client.retriever.projection_spec().code:
            # Another walk's projection: drop it, or a dozen graphs of millions of relationships
            # outgrow the heap (2Wiki's co-occurrence projections are ~3M relationships each).
            gds.drop(client.store, graph)
        return run

    # ------------------------------------------------------------------ answers

    def run_answers(self) -> None:
        """EM/F1 of the reader LLM over each chosen method's own top-k passages (`eval.answers`)."""
        from terag_bench.answers import bench_answers

        wanted = self.config.answer_methods or [
            next((m for m in self.methods if m.startswith("terag-")), next(iter(self.methods), ""))
        ]
        retrieved = {m: [qr.retrieved for qr in run.questions] for m, run in self.methods.items()}
        self.answers, notes = bench_answers(
            self.settings,
            self.dataset.questions,
            retrieved,
            self.docs_by_id,
            wanted,
            self.config.answer_budget_s,
        )
        self.notes += notes

    # ------------------------------------------------------------------ all of it

    def run(self) -> dict[str, Any]:
        t0 = time.perf_counter()
        load_start = _loadavg()
        self.run_baselines()
        self.timings["baselines_s"] = time.perf_counter() - t0
        for extractor in self.config.extractors:
            t = time.perf_counter()
            self.index_extractor(extractor)
            self.timings[f"{extractor}_index_s"] = time.perf_counter() - t
        for extractor in self.config.extractors:
            t = time.perf_counter()
            self.run_extractor(extractor)
            self.timings[f"{extractor}_s"] = time.perf_counter() - t
        if self.score.coverage:  # the bound every row of a coverage set is read against
            self.methods["ceiling"] = self.score.ceiling(self.dataset.questions)
        if self.config.answers:
            t = time.perf_counter()
            self.run_answers()
            self.timings["answers_s"] = time.perf_counter() - t
        self.timings["total_s"] = time.perf_counter() - t0
        return self.result(load_start)

    def result(self, load_start: list[float] | None = None) -> dict[str, Any]:
        methods: dict[str, Any] = {}
        for name, run in self.methods.items():
            idx = self.indexing.get(run.extractor or "")
            toks = (idx["tokens"]["input"], idx["tokens"]["output"]) if idx else (0, 0)
            methods[name] = run.summary(toks)
        return {
            "schema": SCHEMA_VERSION,
            "dataset": {
                "name": self.dataset.name,
                "path": str(self.dataset.path),
                "kind": self.dataset.kind,
                "passages": len(self.passages),
                "questions": len(self.dataset.questions),
                "subset": self.dataset.subset,
            },
            "config": {
                "top_k": TOP_K,
                "ks": list(KS),
                **{k: v for k, v in asdict(self.config).items() if k != "progress"},
                "terag_variants": TERAG_VARIANTS,
                "index_variants": INDEX_VARIANTS,
                "default_config": DEFAULT_KNOBS,
                "paper_config": PAPER_KNOBS,
                "bm25": "bm25s 0.3.16, lucene BM25 k1=1.5 b=0.75, English stopwords, no stemming",
                "dense": f"exact cosine over {self.settings.embedding_model} passage vectors",
                "settings": _safe_settings(self.settings),
            },
            "indexing": self.indexing,
            "methods": methods,
            "answers": self.answers or None,
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "environment": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "loadavg_start": load_start,
                "loadavg_end": _loadavg(),
            },
            "notes": self.notes,
        }


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def run_bench(settings: Settings, dataset: Dataset, config: BenchConfig) -> dict[str, Any]:
    return BenchRunner(settings, dataset, config).run()
