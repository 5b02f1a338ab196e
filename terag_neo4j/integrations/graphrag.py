"""TERAG as a neo4j-graphrag retriever (the `graphrag` extra: `pip install 'terag-neo4j[graphrag]'`).

    >>> from neo4j import GraphDatabase
    >>> from neo4j_graphrag.generation import GraphRAG
    >>> from terag_neo4j.integrations.graphrag import TeragGraphRAGRetriever
    >>> retriever = TeragGraphRAGRetriever(driver, namespace="docs")     # doctest: +SKIP
    >>> retriever.search(query_text="Who founded Porsche?", top_k=3)      # doctest: +SKIP
    >>> GraphRAG(retriever=retriever, llm=llm).search("Who founded Porsche?")  # doctest: +SKIP

`search` returns neo4j-graphrag's `RetrieverResult`: one `RetrieverResultItem` per passage, best
first, whose `content` is the passage's title and text as indexed and whose `metadata` holds the
passage and document ids, the title, the `score` and `score_kind` (pagerank_mass, cosine or rrf);
the result's `metadata` says how the query was ranked (`mode`, `fallback_reason`, `score_kind`)
and which concepts of the graph seeded the walk (`matched_concepts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import neo4j

from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.core.provenance import provenance_of
from terag_neo4j.core.results import Mode
from terag_neo4j.errors import DependencyError
from terag_neo4j.integrations.langchain import passage_content

try:
    from neo4j_graphrag.retrievers.base import Retriever
    from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem
except ModuleNotFoundError as e:  # pragma: no cover - exercised without the extra only
    if not (e.name or "").startswith("neo4j_graphrag"):
        raise
    raise DependencyError(
        "TeragGraphRAGRetriever needs neo4j-graphrag: pip install 'terag-neo4j[graphrag]'"
    ) from e

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.operations import TeragOperations

__all__ = ["TeragGraphRAGRetriever"]


class TeragGraphRAGRetriever(Retriever):
    """TERAG retrieval (concept linking, GDS personalised PageRank) behind neo4j-graphrag's
    `Retriever` interface, for its `GraphRAG` pipeline and its tools.

    Give it the `neo4j.Driver` you already have (as neo4j-graphrag's own retrievers take one; it
    stays yours to close), or nothing (NEO4J_URI / the local server from the settings), or a
    `TeragClient` to share (`client=`), or a `TeragRemote` of a running service (`client=`: no
    torch and no connection of its own in this process; `driver` is then None). `namespace`, `mode` and any `Settings` field
    (`extractor="spacy"`, `preset="paper"`, ...) configure the client it builds; `close()`
    releases that client, never a driver or client passed in.
    """

    # TERAG checks what it needs (GDS, its indexes) on first use, with errors that say what to do
    VERIFY_NEO4J_VERSION = False

    def __init__(
        self,
        driver: neo4j.Driver | None = None,
        *,
        client: TeragClient | TeragOperations | None = None,
        namespace: str | None = None,
        mode: Mode | None = None,
        rerank: bool | None = None,
        neo4j_database: str | None = None,
        settings: Settings | None = None,
        result_formatter: Callable[[neo4j.Record], RetrieverResultItem] | None = None,
        **overrides: Any,
    ) -> None:
        if client is not None:
            if driver is not None or settings is not None or overrides or neo4j_database:
                raise SettingsError(
                    "give TeragGraphRAGRetriever a client, or a driver / settings to build one, "
                    "not both"
                )
            self.client: TeragClient | TeragOperations = client
            self._owns_client = False
        else:
            if neo4j_database is not None:
                overrides["neo4j_database"] = neo4j_database
            if namespace is not None:  # the client's own default: client.index() writes there
                overrides["namespace"] = namespace
            from terag_neo4j.client import TeragClient

            self.client, self._owns_client = TeragClient(settings, driver=driver, **overrides), True
        self.namespace = namespace
        self.mode: Mode | None = mode
        self.rerank = rerank  # None: TERAG_RERANKER decides; False skips it, True requires it
        self.result_formatter = result_formatter
        local: Any = self.client
        if getattr(local, "store", None) is None:  # a remote client: the service connects
            self.driver: neo4j.Driver | None = None  # type: ignore[assignment]
            self.neo4j_database = None
        else:
            super().__init__(local.store.driver, local.settings.neo4j_database)

    def get_search_results(
        self,
        query_text: str,
        top_k: int = 5,
        namespace: str | None = None,
        mode: Mode | None = None,
        rerank: bool | None = None,
    ) -> RawSearchResult:
        """Get the top_k passages for query_text by TERAG retrieval.

        Args:
            query_text (str): The question.
            top_k (int): How many passages (default 5, as neo4j-graphrag's retrievers).
            namespace (str): The corpus namespace (default: the retriever's).
            mode (str): pagerank, dense, hybrid or flat (default: the retriever's, else the
                settings').
            rerank (bool): False skips TERAG_RERANKER's stage, True requires it (default: the
                retriever's, else whether TERAG_RERANKER is set).

        Returns:
            RawSearchResult: one record per passage (content, passage_id, doc_id, title, score,
            score_kind, provenance, citation), best first, and how the query was ranked as
            metadata.
        """
        res = self.client.retrieve(
            query_text,
            top_k=top_k,
            namespace=namespace or self.namespace,
            mode=mode or self.mode,
            rerank=self.rerank if rerank is None else rerank,
        )
        records = [
            neo4j.Record(  # type: ignore[no-untyped-call]  # the driver leaves it unannotated
                {
                    "content": passage_content(p),
                    "passage_id": p.id,
                    "doc_id": p.doc_id,
                    "title": p.title,
                    "score": p.score,
                    "score_kind": res.score_kind,
                    "provenance": provenance_of(p).to_dict(),
                    "citation": provenance_of(p).citation(p.doc_id),
                }
            )
            for p in res.passages
        ]
        metadata = {
            "query": res.query,
            "namespace": res.namespace,
            "mode": res.mode,
            "score_kind": res.score_kind,
            "fallback_reason": res.fallback_reason,
            "entities": list(res.entities),
            "matched_concepts": [
                {"name": m.name, "type": m.type, "match": m.match, "weight": m.weight}
                for m in res.matches
            ],
        }
        return RawSearchResult(records=records, metadata=metadata)

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        """The passage text as `content`, the rest as `metadata`."""
        data = record.data()
        return RetrieverResultItem(content=data.pop("content"), metadata=data)

    def close(self) -> None:
        """Close the client this retriever built (a client or driver passed in stays open)."""
        if self._owns_client:  # a TeragClient this retriever built
            cast("TeragClient", self.client).close()

    def __enter__(self) -> TeragGraphRAGRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
