"""LangChain retriever over a TERAG namespace.

    >>> from terag_neo4j.integrations.langchain import TeragRetriever
    >>> retriever = TeragRetriever(namespace="demo", k=4)        # doctest: +SKIP
    >>> docs = retriever.invoke("Who founded Porsche?")           # doctest: +SKIP
    >>> docs[0].metadata["title"], docs[0].metadata["score"]      # doctest: +SKIP

Each `Document` is one retrieved passage: `page_content` is its title and text (as it was indexed),
`metadata` holds the passage/document ids, the score and what it is (`score_kind`: PageRank mass,
cosine or RRF), the namespace, the retrieval mode, why the walk fell back (`fallback_reason`) and
the query concepts that seeded the PageRank with their restart weights.

Documents go the other way too: `retriever.add_documents(docs)` indexes LangChain documents (a
loader's output) into the retriever's namespace and `retriever.delete(ids)` removes them, as a
LangChain vector store does; `TeragClient.index` takes them as well (`from_langchain`).

Over a running service, give it a `TeragRemote` (`terag_neo4j.service.remote_client`) as `client`: the
application then needs neither torch nor the Neo4j driver, and gets the same documents.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import Field, PrivateAttr

from terag_neo4j.core.documents import InputError
from terag_neo4j.core.provenance import provenance_of
from terag_neo4j.core.results import Mode
from terag_neo4j.indexing.langchain_documents import from_langchain

__all__ = ["TeragRetriever", "from_langchain", "passage_content", "to_documents"]


def passage_content(passage: Any) -> str:
    """Title and text as the passage was indexed (and as the embedder and reader LLM see it);
    `passage` is a `RetrievedPassage`, or the service's `Passage`, which has the same fields."""
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


def to_documents(result: Any) -> list[Document]:
    """LangChain documents for a `RetrievalResult` (or the service's `Retrieval`), best first."""
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
                # Where the passage lies in its source (file or URL, pages, headings,
                # characters), and that as one line to show a reader
                "provenance": provenance_of(p).to_dict(),
                "citation": provenance_of(p).citation(p.doc_id),
                # pagerank_mass, cosine or rrf: what `score` is, set by the mode that ranked
                "score_kind": result.score_kind,
                "namespace": result.namespace,
                # One list per query, copied so that editing one document's metadata leaves the
                # others alone.
                "matched_concepts": [dict(c) for c in concepts],
                "mode": result.mode,
                # Why the walk fell back (to dense, or to the flat ranking alone); None if it did not
                "fallback_reason": result.fallback_reason,
            },
        )
        for p in result.passages
    ]


class TeragRetriever(BaseRetriever):
    """TERAG personalised-PageRank retrieval as a LangChain `BaseRetriever`.

    Give it a `client` (shared, you close it): a `TeragClient`, or a `TeragRemote` of a running
    service (anything with their `retrieve`), or `settings` (or neither: `Settings()` from the
    environment); without a client it builds a `TeragClient` on first use and `close()` releases
    it.
    `k`, `namespace`, `mode` and `rerank` can also be passed per call: `retriever.invoke(q, k=3)`.
    `add_documents` / `delete` (and `aadd_documents` / `adelete`) index and remove LangChain
    documents in the retriever's namespace.
    """

    # Any: a TeragClient or a TeragRemote, and neither class is imported unless used
    client: Any = None
    settings: Any = None
    k: int = Field(default=5, ge=1, description="How many passages to return.")
    namespace: str | None = Field(default=None, description="Defaults to the client's namespace.")
    mode: Mode | None = Field(
        default=None, description="pagerank, dense, hybrid or flat; None follows the settings."
    )
    rerank: bool | None = Field(
        default=None, description="False skips TERAG_RERANKER's stage, True requires it."
    )

    _owned: Any = PrivateAttr(default=None)
    # Closes `_owned` once: on `close()`, or when the retriever is garbage-collected
    _release: weakref.finalize | None = PrivateAttr(default=None)  # type: ignore[type-arg]
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def terag(self) -> Any:
        """The client in use: the one given (a `TeragClient` or `TeragRemote`), else a
        `TeragClient` built from `settings` on first use."""
        if self.client is not None:
            return self.client
        with self._lock:
            if self._owned is None:
                from terag_neo4j.client import TeragClient

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

    def add_documents(
        self,
        documents: Sequence[Document],
        *,
        ids: Sequence[str] | None = None,
        namespace: str | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Index LangChain documents into the namespace (extraction, embedding, graph update);
        returns their TERAG document ids, in order (see `from_langchain` for how they are
        chosen). `kwargs` go to `TeragClient.index` (e.g. `progress=True`)."""
        docs = from_langchain(documents, ids)
        client: Any = self.terag()
        ns = namespace or self.namespace
        if docs and hasattr(client, "index_texts"):  # a TeragRemote: the service indexes them
            body = [
                {"id": d.id, "text": d.text, "title": d.title, "source": d.source} for d in docs
            ]
            job = client.index_texts(body, namespace=ns, wait=True)
            if job.state != "succeeded":
                raise InputError(f"indexing job {job.id} {job.state}: {'; '.join(job.errors)}")
        elif docs:
            kwargs.setdefault("progress", False)
            client.index(docs, namespace=ns, **kwargs)
        return [d.id for d in docs]

    def delete(
        self, ids: Sequence[str] | None = None, *, namespace: str | None = None, **kwargs: Any
    ) -> bool:
        """Remove documents by their TERAG document ids (what `add_documents` returned, or a
        retrieved document's `metadata["doc_id"]`), all their passages with them. True if every
        id had passages. Unlike some vector stores, no ids is an error, not "delete all": drop a
        namespace with `TeragClient.drop`."""
        if not ids:
            raise InputError(
                "delete() needs the ids of the documents to remove; TeragClient.drop() removes "
                "a whole namespace"
            )
        client = self.terag()
        ns = namespace or self.namespace
        removed = [client.delete(doc_id, namespace=ns) for doc_id in ids]
        return all(n > 0 for n in removed)

    async def aadd_documents(
        self,
        documents: Sequence[Document],
        *,
        ids: Sequence[str] | None = None,
        namespace: str | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """`add_documents` in a worker thread."""
        return await run_in_executor(
            None, lambda: self.add_documents(documents, ids=ids, namespace=namespace, **kwargs)
        )

    async def adelete(
        self, ids: Sequence[str] | None = None, *, namespace: str | None = None, **kwargs: Any
    ) -> bool:
        """`delete` in a worker thread."""
        return await run_in_executor(None, lambda: self.delete(ids, namespace=namespace))

    def _retrieve(
        self,
        query: str,
        k: int | None,
        namespace: str | None,
        mode: Mode | None,
        rerank: bool | None = None,
    ) -> list[Document]:
        result = self.terag().retrieve(
            query,
            top_k=self.k if k is None else k,
            namespace=namespace or self.namespace,
            mode=mode or self.mode,
            rerank=self.rerank if rerank is None else rerank,
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
        rerank: bool | None = None,
    ) -> list[Document]:
        return self._retrieve(query, k, namespace, mode, rerank)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        namespace: str | None = None,
        mode: Mode | None = None,
        rerank: bool | None = None,
    ) -> list[Document]:
        # Query NER, embedding and the GDS call are CPU or Bolt round-trip bound and the client is
        # synchronous; a worker thread keeps the event loop free (langchain's executor also carries
        # the callback context over).
        return await run_in_executor(None, self._retrieve, query, k, namespace, mode, rerank)
