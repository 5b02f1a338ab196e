"""The Python client: one object that indexes, retrieves and answers.

>>> from terag_neo4j import TeragClient
>>> with TeragClient(namespace="demo", extractor="spacy") as terag:   # doctest: +SKIP
...     terag.index(["docs/"])
...     result = terag.retrieve("Who founded Radio City?")
...     print(result.passages[0].title)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from terag_neo4j import namespace_views as views
from terag_neo4j import tracing
from terag_neo4j.config import ExtractorName, Settings
from terag_neo4j.core import results
from terag_neo4j.core.documents import Document, OnProgress
from terag_neo4j.core.extractor import Extractor
from terag_neo4j.core.results import AnswerResult, Mode, RetrievalResult
from terag_neo4j.embeddings import AnyEmbedder, CachedEmbedder, Embedder, cached_embedder, model_id
from terag_neo4j.indexing.extraction import ExtractionCache, make_extractor
from terag_neo4j.indexing.loading import document_id_candidates, gather_documents
from terag_neo4j.indexing.pipeline import Indexer, IngestReport
from terag_neo4j.indexing.sync import sync_folders
from terag_neo4j.llm import LLM, TokenLedger, make_llm
from terag_neo4j.local.neo4j_home import connection_target
from terag_neo4j.retrieval.reranked import RerankedRetriever
from terag_neo4j.store import (
    GraphStore,
    NamespaceInfo,
    check_namespace,
    held_call,
    neo4j_errors,
)
from terag_neo4j.store.namespace_embedder import NamespaceEmbedders

if TYPE_CHECKING:
    from langchain_core.documents import Document as LCDocument
    from langchain_core.language_models import BaseChatModel
    from neo4j import Driver

log = logging.getLogger(__name__)

# What `index` takes: paths (files, folders), our Documents, LangChain Documents
Source = str | Path | Document


class TeragClient(views.ArchiveMethods):
    """Index documents into a namespace of a Neo4j graph and retrieve from it.

    Built from `Settings` (environment / `.env`) with keyword overrides, e.g.
    `TeragClient(namespace="wiki", extractor="spacy", top_k=10)`. Close it (or use `with`) to
    release the Neo4j driver and caches.

    `driver=` hands in a `neo4j.Driver` you made (your own pool, auth, Aura or cluster
    configuration); the client then ignores NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD, uses
    `neo4j_database` from the settings, and leaves the driver open on `close()`: you own it.
    `embedder=` hands in an `Embedder` already loaded, for TERAG_EMBEDDING_MODEL's place.
    `extractor=` is a backend name (the setting) or an `Extractor` built elsewhere (the bench's
    replayed LLM extractions), which indexes and does query NER for namespaces built with it.
    `llm=` hands in a LangChain chat model (any `BaseChatModel`: ChatOpenAI, ChatOllama...) for
    TERAG_LLM_MODEL's place: it extracts, does query NER and answers, its tokens read from its
    `usage_metadata` into `ledger`.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        driver: Driver | None = None,
        embedder: Embedder | None = None,
        extractor: ExtractorName | Extractor | None = None,
        llm: BaseChatModel | LLM | None = None,
        **overrides: Any,
    ) -> None:
        overrides |= {"extractor": extractor} if isinstance(extractor, str) else {}
        base = settings or Settings()
        self.settings = base.with_overrides(**overrides) if overrides else base
        check_namespace(self.settings.namespace)
        self.ledger = TokenLedger()
        self.store = (
            GraphStore.from_settings(self.settings, connection_target(self.settings))
            if driver is None
            else GraphStore.from_driver(driver, self.settings)
        )
        self._llm: LLM | None = None
        self._llm_given = llm
        self._extractor: Extractor | None = None if isinstance(extractor, str) else extractor
        self._embedders: dict[str, CachedEmbedder] = {}  # by model_id
        if embedder is not None:
            self.settings = self.settings.with_overrides(embedding_model=embedder.model_name)
            cached = CachedEmbedder(embedder, self.settings.home / "embeddings.sqlite3")
            self._embedders[model_id(embedder.model_name)] = cached
        self._cache: ExtractionCache | None = None
        self._retriever: RerankedRetriever | None = None
        self._namespace_embedders: NamespaceEmbedders | None = None
        self._query_extractors: dict[str, Extractor] = {}
        self._namespace_backend: dict[str, str] = {}
        # Builds each lazy part once: threads that ask for one at the same time would otherwise
        # each load the models and open their own SQLite connections, of which `close` closes
        # only the last. Re-entrant: the retriever is built from the other parts.
        self._build_lock = threading.RLock()

    # ------------------------------------------------------------------ lazily built parts

    @property
    def llm(self) -> LLM:
        """The LLM of extraction, query NER and answers: the chat model handed in as `llm=`,
        else the backend TERAG_LLM_MODEL names."""
        if self._llm is None:
            with self._build_lock:
                if self._llm is None:
                    self._llm = make_llm(self.settings, self.ledger, self._llm_given)
        return self._llm

    @property
    def extractor(self) -> Extractor:
        if self._extractor is None:
            with self._build_lock:
                if self._extractor is None:
                    needs_llm = self.settings.extractor == "ollama"
                    llm = self.llm if needs_llm else None
                    self._extractor = make_extractor(self.settings, llm)
        return self._extractor

    @property
    def extractor_name(self) -> str:
        """The indexing backend's name: the one handed in, else the `extractor` setting."""
        return self.settings.extractor if self._extractor is None else self._extractor.name

    @property
    def embedder(self) -> CachedEmbedder:
        """The embedder of TERAG_EMBEDDING_MODEL, the model new namespaces are built with."""
        return self.embedder_for(self.settings.embedding_model)

    def embedder_for(self, model: str) -> CachedEmbedder:
        """An embedder of `model`, loaded once; namespaces built with a model other than
        TERAG_EMBEDDING_MODEL keep theirs (see `namespace_embedder`)."""
        key = model_id(model)
        if key not in self._embedders:
            with self._build_lock:
                if key not in self._embedders:
                    self._embedders[key] = cached_embedder(model, self.settings)
        return self._embedders[key]

    @property
    def embedders(self) -> NamespaceEmbedders:
        """Which model embeds a namespace's passages and questions: the one place that decides,
        for indexing (`namespace_embedder`) and retrieval (the retriever shares it)."""
        if self._namespace_embedders is None:
            with self._build_lock:
                if self._namespace_embedders is None:
                    self._namespace_embedders = NamespaceEmbedders(
                        self.embedder, self.settings.embedding_model, load=self.embedder_for
                    )
        return self._namespace_embedders

    def namespace_embedder(self, namespace: str | None = None) -> AnyEmbedder:
        """The embedder of the model `namespace` was built with, with the prefixes it was built
        with (its vectors compare only with those), or TERAG_EMBEDDING_MODEL's for a namespace
        not built yet."""
        ns = namespace or self.settings.namespace
        rows = self.store.read("namespace_version", namespace=ns)
        return self.embedders.for_namespace(ns, rows[0] if rows else None)

    @property
    def cache(self) -> ExtractionCache:
        if self._cache is None:
            with self._build_lock:
                if self._cache is None:
                    self._cache = ExtractionCache(self.settings.home / "extractions.sqlite3")
        return self._cache

    @property
    def retriever(self) -> RerankedRetriever:
        if self._retriever is None:
            with self._build_lock:
                if self._retriever is None:
                    self._retriever = self._build_retriever()
        return self._retriever

    def _build_retriever(self) -> RerankedRetriever:
        # The reader LLM is the client's, built when an answer first needs it.
        return RerankedRetriever(
            self.settings,
            self.store,
            self.extractor,
            self.embedder,
            lambda: self.llm,
            extractor_for=self.query_extractor,
            embedders=self.embedders,
            ledger=self.ledger,
        )

    def query_backend(self, namespace: str | None = None) -> str:
        """The query NER backend for `namespace`: `query_extractor` when set, else the backend
        the namespace was indexed with, else `extractor` (a namespace that does not exist)."""
        if self.settings.query_extractor is not None:
            return self.settings.query_extractor
        ns = namespace or self.settings.namespace
        if ns not in self._namespace_backend:
            rows = self.store.read("namespace_version", namespace=ns)
            built = rows[0]["extractor"] if rows else None
            if built is None:
                return self.extractor_name  # not indexed yet: ask again next time
            if built not in (*get_args(ExtractorName), self.extractor_name):
                # a backend not handed to this client (the bench's replays): spaCy needs no server
                log.info("namespace %r: extractor %r not here; query NER uses spacy", ns, built)
                built = "spacy"
            self._namespace_backend[ns] = str(built)
        return self._namespace_backend[ns]

    def query_extractor(self, namespace: str | None = None) -> Extractor:
        """The extractor that does query NER for `namespace` (see `query_backend`)."""
        return self.backend_extractor(self.query_backend(namespace))

    def backend_extractor(self, backend: str) -> Extractor:
        """An extractor of `backend`, built once (shared with query NER)."""
        if backend == self.extractor_name:
            return self.extractor
        if backend not in self._query_extractors:
            with self._build_lock:
                if backend not in self._query_extractors:
                    llm = self.llm if backend == "ollama" else None
                    built = make_extractor(self.settings, llm, backend=backend)
                    self._query_extractors[backend] = built
        return self._query_extractors[backend]

    # ------------------------------------------------------------------ public API

    @held_call
    def index(
        self,
        source: Source | LCDocument | Iterable[Source | LCDocument],
        namespace: str | None = None,
        progress: bool = True,
        errors: list[str] | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        prune: bool = False,
        should_stop: Callable[[], bool] | None = None,
        on_progress: OnProgress | None = None,
    ) -> IngestReport:
        """Index files/folders (paths), `Document` objects or LangChain `Document`s (see
        `terag_neo4j.integrations.langchain.from_langchain` for their ids); idempotent and
        incremental: a document id indexed again replaces that document. Files are read by
        their content (PDF, .docx, HTML, Markdown, text, JSON Lines); in folders, `include` /
        `exclude` globs select files (see `terag_neo4j.indexing.readers.discovery`). With `errors`, a file
        that cannot be read is reported there and skipped; without it, it raises. Documents
        read before from files now gone from an indexed folder are listed in the report's
        `missing_documents`; `prune` deletes them (see `terag_neo4j.indexing.sync`).
        `should_stop` is asked while chunking and between steps (extraction, embedding, each
        batch's write): if True, `IngestCancelled` is raised; batches written before are whole,
        and indexing them again resumes. `on_progress` is told the passages done."""
        ns = namespace or self.settings.namespace
        with tracing.span("index", {"terag.namespace": ns}):
            docs, paths = gather_documents(source, errors, include, exclude)
            tracing.annotate({"terag.documents": len(docs)})
            with neo4j_errors(self.store.uri):
                embedder = self.namespace_embedder(ns)
            # Budget mode: spaCy indexes every passage, the configured extractor the core only
            budget = self.settings.llm_budget is not None
            indexer = Indexer(
                self.settings,
                self.store,
                self.backend_extractor("spacy") if budget else self.extractor,
                embedder,
                self.cache,
                core_extractor=self.extractor if budget else None,
            )
            with neo4j_errors(self.store.uri):
                report = indexer.index(docs, ns, progress, should_stop, on_progress)
                sync_folders(self.store, ns, paths, report, prune)
        self._namespace_backend.pop(ns, None)  # it may have been (re)built with another backend
        if errors:
            report.warnings.extend(errors)
        return report

    @held_call
    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        namespace: str | None = None,
        entities: Sequence[str] | None = None,
        run_id: str = "query",
        mode: Mode | None = None,
        rerank: bool | None = None,
    ) -> RetrievalResult:
        """Top passages for `query` by TERAG's personalised PageRank (dense fallback).

        `entities` skips query NER (the walk starts from these names); `run_id` tags the
        query's LLM calls in the ledger; `mode` is pagerank, dense, hybrid or flat (default: the
        preset's); `rerank` False skips TERAG_RERANKER's stage, True requires it.
        """
        ns = namespace or self.settings.namespace
        traced = tracing.question(ns, mode, query, self.settings.trace_content)
        with tracing.span("retrieve", traced), neo4j_errors(self.store.uri):
            return self.retriever.retrieve(
                query, top_k, namespace, entities, run_id=run_id, mode=mode, rerank=rerank
            )

    @held_call
    def answer(
        self, query: str, top_k: int | None = None, namespace: str | None = None
    ) -> AnswerResult:
        """Retrieve, then answer with the reader LLM; tokens of both go to `self.ledger`."""
        ns = namespace or self.settings.namespace
        traced = tracing.question(ns, None, query, self.settings.trace_content)
        with tracing.span("answer", traced), neo4j_errors(self.store.uri):
            return self.retriever.answer(query, top_k=top_k, namespace=namespace)

    @held_call
    def delete(self, document: str | Path, namespace: str | None = None) -> int:
        """Remove a document (all its passages), named by its id or by the path `index` read
        it from (see `document_ids`); returns how many passages went."""
        ns = namespace or self.settings.namespace
        with neo4j_errors(self.store.uri):
            return sum(self.store.documents.delete(ns, d) for d in self.document_ids(document, ns))

    @held_call
    def document_ids(self, document: str | Path, namespace: str | None = None) -> list[str]:
        """The ids of the namespace's documents that `document` names: itself when it is an id
        there, else the one `index` gives the file at that path (its absolute path, so only the
        document read from that very file); none when nothing matches."""
        ns = check_namespace(namespace or self.settings.namespace)
        with neo4j_errors(self.store.uri):
            self.store.require_namespace(ns)
            if isinstance(document, str) and self.store.documents.present(ns, [document]):
                return [document]
            candidates = document_id_candidates(document)
            present = self.store.documents.present(ns, candidates)
        return [c for c in candidates if c in present]

    @held_call
    def stats(self, namespace: str | None = None) -> NamespaceInfo:
        with neo4j_errors(self.store.uri):
            return self.store.namespaces.describe(namespace or self.settings.namespace)

    @held_call
    def namespaces(self) -> list[NamespaceInfo]:
        with neo4j_errors(self.store.uri):
            return self.store.namespaces.all()

    @held_call
    def drop(self, namespace: str | None = None) -> None:
        """Remove a namespace: its GDS projections first, then its graph. Projections that
        cannot be dropped keep the namespace (a retry drops both), so none is left in GDS
        memory without it; a Neo4j without GDS has none to drop."""
        ns = check_namespace(namespace or self.settings.namespace)
        views.drop_namespace(self.store, ns, self._retriever)
        self._namespace_backend.pop(ns, None)

    @held_call
    def documents(
        self, namespace: str | None = None, offset: int = 0, limit: int = 100
    ) -> results.DocumentPage:
        return views.documents(self, namespace, offset, limit)

    @held_call
    def why(
        self, passage_id: str, question: str, namespace: str | None = None, top_k: int = 5
    ) -> results.WhyRetrieved:
        return views.why(self, namespace, passage_id, question, top_k)

    @held_call
    def neighbourhood(
        self, concept: str, namespace: str | None = None, depth: int = 1, max_nodes: int = 50
    ) -> results.Neighbourhood:
        return views.neighbourhood(self, namespace, concept, depth, max_nodes)

    def close(self, wait_s: float | None = None) -> None:
        """Refuse new calls, wait up to `wait_s` (TERAG_NEO4J_TIMEOUT_S) for the running ones,
        then release the Neo4j driver (unless handed in), the LLM client and the caches. A call
        still running then releases them as it returns: nothing is closed under a call, and
        every call either finishes or raises `ClientClosed`."""
        wait = self.settings.neo4j_timeout_s if wait_s is None else wait_s
        self.store.in_flight.close(self._release, wait)

    def _release(self) -> None:
        for part in (self._cache, self._namespace_embedders, *self._embedders.values(), self._llm):
            if part is not None:
                part.close()
        self.store.release_driver()

    def __enter__(self) -> TeragClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
