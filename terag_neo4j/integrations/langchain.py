"""LangChain retriever over a TERAG namespace.

    >>> from terag_neo4j.integrations.langchain import TeragRetriever
    >>> retriever = TeragRetriever(namespace="demo", k=4)        # doctest: +SKIP
    >>> docs = retriever.invoke("Who founded Porsche?")           # doctest: +SKIP
    >>> docs[0].metadata["title"], docs[0].metadata["score"]      # doctest: +SKIP

Each `Document` is one retrieved passage: `page_content` is its title and text (as it was indexed),
`metadata` holds the passage/document ids, the PageRank (or dense/RRF) score, the namespace, the
retrieval mode and the query concepts that seeded the PageRank with their restart weights.
"""

from __future__ import annotations

import threading
import weakref
from typing import Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import Field, PrivateAttr

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.results import RetrievalResult, RetrievedPassage

Mode = Literal["pagerank", "dense", "hybrid"]

__all__ = ["TeragRetriever", "passage_content", "to_documents"]


def passage_content(passage: RetrievedPassage) -> str:
    """Title and text as the passage was indexed (and as the embedder and reader LLM see it)."""
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


def to_documents(result: RetrievalResult) -> list[Document]:
    """LangChain documents for a `RetrievalResult`, best first."""
    concepts = [
        {"name": m.name, "type": m.type, "match": m.match, "weight": m.weight}
        for m in result.matches
    ]
    return [
        Document(
            page_content=passage_content(p),
            id=p.id,
            metadata={
                "passage_id": p.id,
                "doc_id": p.doc_id,
                "title": p.title,
                "score": p.score,
                "namespace": result.namespace,
                # One list per query, copied so that editing one document's metadata leaves the
                # others alone.
                "matched_concepts": [dict(c) for c in concepts],
                "mode": result.mode,
            },
        )
        for p in result.passages
    ]


class TeragRetriever(BaseRetriever):
    """TERAG personalised-PageRank retrieval as a LangChain `BaseRetriever`.

    Give it a `client` (shared, you close it) or `settings` (or neither: `Settings()` from the
    environment); without a client it builds one on first use and `close()` releases it.
    `k`, `namespace` and `mode` can also be passed per call: `retriever.invoke(q, k=3)`.
    """

    client: TeragClient | None = None
    settings: Settings | None = None
    k: int = Field(default=5, ge=1, description="How many passages to return.")
    namespace: str | None = Field(default=None, description="Defaults to the client's namespace.")
    mode: Mode | None = Field(
        default=None, description="pagerank, dense or hybrid; None follows the settings."
    )

    _owned: TeragClient | None = PrivateAttr(default=None)
    # Closes `_owned` once: on `close()`, or when the retriever is garbage-collected
    _release: weakref.finalize | None = PrivateAttr(default=None)  # type: ignore[type-arg]
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def terag(self) -> TeragClient:
        """The client in use (built from `settings` on first use when none was given)."""
        if self.client is not None:
            return self.client
        with self._lock:
            if self._owned is None:
                self._owned = TeragClient(self.settings)
                self._release = weakref.finalize(self, self._owned.close)
            return self._owned

    def close(self) -> None:
        """Close the client this retriever built itself (a client passed in stays open). It is
        also closed when the retriever is garbage-collected, and on leaving `with`."""
        with self._lock:
            if self._release is not None:
                self._release()
            self._owned = self._release = None

    def __enter__(self) -> TeragRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _retrieve(
        self, query: str, k: int | None, namespace: str | None, mode: Mode | None
    ) -> list[Document]:
        result = self.terag().retrieve(
            query,
            top_k=self.k if k is None else k,
            namespace=namespace or self.namespace,
            mode=mode or self.mode,
        )
        return to_documents(result)

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        namespace: str | None = None,
        mode: Mode | None = None,
    ) -> list[Document]:
        return self._retrieve(query, k, namespace, mode)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        namespace: str | None = None,
        mode: Mode | None = None,
    ) -> list[Document]:
        # Query NER, embedding and the GDS call are CPU or Bolt round-trip bound and the client is
        # synchronous; a worker thread keeps the event loop free (langchain's executor also carries
        # the callback context over).
        return await run_in_executor(None, self._retrieve, query, k, namespace, mode)
