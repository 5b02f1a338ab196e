"""The embedding model a namespace was built with, and the size of vector the indexes take.

A namespace records its model (`embedding_model`, `embedding_dimensions` on its Namespace node)
at its first ingest. Vectors of another model are not comparable with its passages', so an
ingest or a retrieval with another TERAG_EMBEDDING_MODEL is refused. The vector indexes
(schema.cypher) take one size of vector for the whole database; Neo4j stores a vector of another
size without indexing it, so a model of another size is refused before anything is written.
"""

from __future__ import annotations

from terag_neo4j.store.connection import GraphStoreError
from terag_neo4j.store.core import StoreCore


class EmbeddingModelMismatch(GraphStoreError):
    """TERAG_EMBEDDING_MODEL is not the model the namespace was built with, or makes vectors the
    database's vector indexes cannot hold."""


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


class EmbeddingModelPin(StoreCore):
    def vector_dimensions(self) -> dict[str, int]:
        """{vector index name: the vector size it holds} of the project's vector indexes."""
        return {
            str(r["name"]): int(r["dimensions"])
            for r in self.read("vector_dimensions")
            if r["dimensions"] is not None
        }

    def check_embedding_dimensions(self, model: str, dimensions: int) -> None:
        """Refuse a model whose vectors the vector indexes cannot hold."""
        wrong = {n: d for n, d in self.vector_dimensions().items() if d != dimensions}
        if wrong:
            name, size = sorted(wrong.items())[0]
            raise EmbeddingModelMismatch(
                f"TERAG_EMBEDDING_MODEL={model!r} makes {dimensions}-dimensional vectors, but "
                f"this database's vector index {name} holds {size}-dimensional ones (Neo4j "
                f"would store the vectors without indexing them): use a {size}-dimensional model"
            )
