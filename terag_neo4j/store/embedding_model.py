"""The embedding model a namespace was built with, and the size of vector its index takes.

A namespace records its model (`embedding_model`, `embedding_dimensions`, and the prefixes it
embedded with, on its Namespace node) at its first ingest. Vectors of another model are not
comparable with its passages', so an ingest or a retrieval with another model is refused. Each
namespace's passage vector index is made at its model's dimension (store/search.py); Neo4j
stores a vector of another size without indexing it, so such a vector is refused before
anything is written. The concept index is shared and holds 384-dimensional vectors; a
namespace of another size matches its concepts by an exact scan instead.
"""

from __future__ import annotations

from terag_neo4j.store.connection import GraphStoreError
from terag_neo4j.store.ids import vector_index
from terag_neo4j.store.sessions import StoreCore


class EmbeddingModelMismatch(GraphStoreError):
    """TERAG_EMBEDDING_MODEL is not the model the namespace was built with, or makes vectors the
    namespace's vector index cannot hold."""


def check_embedding_model(namespace: str, recorded: str | None, model: str) -> None:
    """Refuse `model` for a namespace built with another one (`recorded`; None: not recorded,
    as for a namespace indexed before models were)."""
    if recorded is not None and recorded != model:
        raise EmbeddingModelMismatch(
            f"namespace {namespace!r} was built with the embedding model {recorded!r}, not "
            f"TERAG_EMBEDDING_MODEL={model!r}, whose vectors do not compare with its passages': "
            f"set TERAG_EMBEDDING_MODEL={recorded} for it, or index into another namespace "
            f"(`terag delete --all -n {namespace}` drops this one)"
        )


class EmbeddingModelPin:
    """The vector size a namespace's index holds, and refusing a model that does not fit it
    (`store.embedding_model`)."""

    def __init__(self, core: StoreCore) -> None:
        self.core = core

    def dimensions(self, namespace: str) -> int | None:
        """The vector size the namespace's passage index holds (None: it has none yet)."""
        rows = self.core.read("namespace_vector_dimensions", index=vector_index(namespace))
        size = rows[0]["dimensions"] if rows else None
        return int(size) if size is not None else None

    def check_dimensions(self, namespace: str, model: str, dimensions: int) -> None:
        """Refuse a model whose vectors the namespace's vector index cannot hold."""
        size = self.dimensions(namespace)
        if size is not None and size != dimensions:
            raise EmbeddingModelMismatch(
                f"TERAG_EMBEDDING_MODEL={model!r} makes {dimensions}-dimensional vectors, but "
                f"namespace {namespace!r} holds {size}-dimensional ones (Neo4j would store them "
                f"without indexing them): set TERAG_EMBEDDING_MODEL to the {size}-dimensional "
                "model it was built with, or index into another namespace"
            )
